import { z } from "@hono/zod-openapi";
import type { ZodObject, ZodType } from "zod";
import type { WalletActor } from "../../../actor.ts";
import type { ServiceContext } from "../../../context.ts";
import { problemsAction, sendTelemetryAction } from "../../../features/agent-onboarding/next-actions.ts";
import { remediateAction } from "../../../features/agent-onboarding/problem-assumption.ts";
import {
  type NextAction,
  NextActionsSchema,
  nextAction,
} from "../../../features/agent-onboarding/schemas.ts";
import { getProblem } from "../../../features/telemetry/problems/get-problem.ts";
import { listProblems } from "../../../features/telemetry/problems/list-problems.ts";
import {
  type Problem,
  ProblemListQuerySchema,
  type ProblemPage,
  ProblemPageSchema,
  TelemetryProblemSchema,
} from "../../../features/telemetry/problems/schemas.ts";
import { getServiceHealth } from "../../../features/telemetry/queries/get-service-health.ts";
import { getTrace } from "../../../features/telemetry/queries/get-trace.ts";
import { hasTelemetry } from "../../../features/telemetry/queries/has-telemetry.ts";
import {
  LogPageSchema,
  LogSearchQuerySchema,
  ServiceHealthPageSchema,
  ServiceHealthQuerySchema,
  TraceParamsSchema,
  TraceSchema,
} from "../../../features/telemetry/queries/schemas.ts";
import { searchLogs } from "../../../features/telemetry/queries/search-logs.ts";
import { EXAMPLE_PROBLEM, EXAMPLE_TRACE } from "../examples.ts";
import { validate } from "../parse-input.ts";
import type { X402Route } from "../route.ts";
import {
  logPageExample,
  problemExample,
  problemPageExample,
  serviceHealthExample,
  traceExample,
} from "./examples.ts";

/**
 * Step 4 of the agent flow (spec 1B): the paid reads of the wallet organisation's telemetry —
 * the same verbs as the REST routes, scoped by the verified payer instead of an API key. Each
 * query takes an optional `environmentId` (default: the organisation's first environment).
 */
const environment = {
  environmentId: z.uuid().optional().describe("Default: the organisation's first environment"),
};

const EnvironmentQuery = z.object(environment);

/**
 * The environment a read answered for, without reading it again: the one named (the verb checked
 * it is the wallet's; ids are stored in lowercase) or the wallet's default.
 */
export const answeredEnvironment = (ctx: ServiceContext<WalletActor>, named: string | undefined): string =>
  named?.toLowerCase() ?? ctx.actor.environmentId;

/**
 * Nothing arrived yet: how to send it. Otherwise the open problems are the next thing to look at.
 * `named` is the query's environment, which the read has already checked.
 */
async function afterOverview(ctx: ServiceContext<WalletActor>, named: string | undefined) {
  const environmentId = answeredEnvironment(ctx, named);
  if (!(await hasTelemetry(ctx.deps.db, environmentId))) return [sendTelemetryAction(ctx.deps)];
  return [problemsAction(ctx.deps, environmentId, "Problems detected in your telemetry, most recent first.")];
}

/** The worst live problem of the page is the next thing to inspect. */
async function afterProblems(ctx: ServiceContext<WalletActor>, named: string | undefined, page: ProblemPage) {
  const worst = page.items.find((p) => p.status === "open" || p.status === "regressed");
  if (!worst) return afterOverview(ctx, named);
  return [
    nextAction(
      ctx.deps,
      `GET /x402/problems/${worst.id}?environmentId=${answeredEnvironment(ctx, named)}`,
      "read",
      {
        action: "inspect_problem",
        description: `Stack trace, sample traces and remediation state of "${worst.title}" (${worst.count} occurrences).`,
      },
    ),
  ];
}

/** A live problem can be remediated; a sample trace shows where it happened. */
async function afterProblem(ctx: ServiceContext<WalletActor>, named: string | undefined, problem: Problem) {
  const environmentId = answeredEnvironment(ctx, named);
  const sample = problem.sampleTraceIds[0];
  const next_actions: NextAction[] = [];
  const remediate =
    (problem.status === "open" || problem.status === "regressed") &&
    remediateAction(
      ctx.deps,
      problem,
      environmentId,
      "Start a remediation: patchbay investigates, fixes it in a sandbox, runs the repository's tests and opens a pull request for a human to review. Poll it for free with your session token or your wallet signed in.",
    );
  if (remediate) next_actions.push(remediate);
  if (sample) {
    next_actions.push(
      nextAction(ctx.deps, `GET /x402/traces/${sample}?environmentId=${environmentId}`, "read", {
        action: "get_trace",
        description: "The span tree of a trace in which this problem occurred.",
      }),
    );
  }
  return next_actions;
}

/**
 * A paid read: the query (then the path parameters) validated, the verb's answer, and the next
 * actions that follow from it.
 */
function paidRead<
  Q extends ZodType<{ environmentId?: string | undefined }>,
  P extends ZodType,
  R extends object,
>(read: {
  path: `/x402/${string}`;
  description: string;
  query: Q;
  params?: P;
  pathParamsExample?: Record<string, unknown>;
  output: ZodObject;
  outputExample: Record<string, unknown>;
  run(ctx: ServiceContext<WalletActor>, query: z.output<Q>, params: z.output<P>): Promise<R>;
  next(ctx: ServiceContext<WalletActor>, named: string | undefined, answer: R): Promise<NextAction[]>;
}): X402Route {
  const { query, params } = read;
  return {
    method: "GET",
    path: read.path,
    description: read.description,
    paid: {
      price: "read",
      input: query,
      ...(params ? { pathParams: params } : {}),
      ...(read.pathParamsExample ? { pathParamsExample: read.pathParamsExample } : {}),
      output: read.output.extend({ next_actions: NextActionsSchema }),
      outputExample: read.outputExample,
    },
    caller: "wallet",
    async handle(c, ctx) {
      const input = validate(query, c.req.query(), "query");
      const answer = await read.run(
        ctx,
        input,
        (params ? validate(params, c.req.param(), "path") : {}) as z.output<P>,
      );
      return c.json({ ...answer, next_actions: await read.next(ctx, input.environmentId, answer) });
    },
  };
}

export const telemetryRoutes: X402Route[] = [
  paidRead({
    path: "/x402/services",
    description:
      "Service health over a window: request rate, error rate and p50/p95/p99 latency per service, and when each was last seen.",
    query: ServiceHealthQuerySchema.extend(environment),
    output: ServiceHealthPageSchema,
    outputExample: serviceHealthExample,
    run: (ctx, input) => getServiceHealth({ ctx, input }),
    next: afterOverview,
  }),
  paidRead({
    path: "/x402/logs",
    description:
      "Log records in a time range (default: the last hour), filtered by service, minimum severity, text and trace id; newest first, paginated.",
    query: LogSearchQuerySchema.extend(environment),
    output: LogPageSchema,
    outputExample: logPageExample,
    run: (ctx, input) => searchLogs({ ctx, input }),
    next: afterOverview,
  }),
  paidRead({
    path: "/x402/traces/:traceId",
    description: "One trace as its span tree (depth first, each span after its parent).",
    query: EnvironmentQuery,
    params: TraceParamsSchema,
    pathParamsExample: { traceId: EXAMPLE_TRACE },
    output: TraceSchema,
    outputExample: traceExample,
    run: (ctx, { environmentId }, { traceId }) => getTrace({ ctx, input: { environmentId, traceId } }),
    next: afterOverview,
  }),
  paidRead({
    path: "/x402/problems",
    description:
      "Problems detected in the organisation's telemetry (exceptions and error logs grouped by fingerprint), most recently seen first; filter by status and service; paginated.",
    query: ProblemListQuerySchema.extend(environment),
    output: ProblemPageSchema,
    outputExample: problemPageExample,
    run: (ctx, input) => listProblems({ ctx, input }),
    next: afterProblems,
  }),
  paidRead({
    path: "/x402/problems/:id",
    description:
      "One problem with its stack trace, sample trace ids (resolvable with /x402/traces/{traceId}) and remediation state.",
    query: EnvironmentQuery,
    params: z.object({ id: z.string().min(1).max(64) }),
    pathParamsExample: { id: EXAMPLE_PROBLEM.id },
    output: TelemetryProblemSchema,
    outputExample: problemExample,
    run: (ctx, { environmentId }, { id }) => getProblem({ ctx, input: { environmentId, problemId: id } }),
    next: afterProblem,
  }),
];
