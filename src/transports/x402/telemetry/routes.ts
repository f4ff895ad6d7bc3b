import { z } from "@hono/zod-openapi";
import type { WalletActor } from "../../../actor.ts";
import type { ServiceContext } from "../../../context.ts";
import type { Deps } from "../../../deps.ts";
import { sendTelemetryAction } from "../../../features/agent-onboarding/next-actions.ts";
import { remediateAction } from "../../../features/agent-onboarding/problem-assumption.ts";
import type { NextAction } from "../../../features/agent-onboarding/schemas.ts";
import { NextActionsSchema } from "../../../features/agent-onboarding/schemas.ts";
import { getProblem } from "../../../features/telemetry/problems/get-problem.ts";
import { listProblems } from "../../../features/telemetry/problems/list-problems.ts";
import {
  type Problem,
  ProblemListQuerySchema,
  type ProblemPage,
  ProblemPageSchema,
  ProblemSchema,
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
import { formatUsd } from "../../../platform/payments/prices.ts";
import { validate } from "../parse-input.ts";
import type { X402Route } from "../route.ts";

/**
 * Step 4 of the agent flow (spec 1B): the paid reads of the wallet organisation's telemetry —
 * the same verbs as the REST routes, scoped by the verified payer instead of an API key. Each
 * query takes an optional `environmentId` (default: the organisation's first environment).
 */
const environment = {
  environmentId: z.uuid().optional().describe("Default: the organisation's first environment"),
};
const nextActions = { next_actions: NextActionsSchema };

const ServicesQuery = ServiceHealthQuerySchema.extend(environment);
const LogsQuery = LogSearchQuerySchema.extend(environment);
const ProblemsQuery = ProblemListQuerySchema.extend(environment);
const EnvironmentQuery = z.object(environment);
const ProblemParams = z.object({ id: z.string().min(1).max(64) });

/**
 * The environment a read answered for, without reading it again: the one named (the verb checked
 * it is the wallet's; ids are stored in lowercase) or the wallet's default.
 */
export const answeredEnvironment = (ctx: ServiceContext<WalletActor>, named: string | undefined): string =>
  named?.toLowerCase() ?? ctx.actor.environmentId;

/** A paid read the agent may call next, at the read price. */
export function readAction(deps: Deps, name: string, path: string, description: string): NextAction {
  const price = formatUsd(deps.payments.prices.read);
  return { action: name, method: "GET", href: `${deps.config.baseUrl}${path}`, price, description };
}

/**
 * Nothing arrived yet: how to send it. Otherwise the open problems are the next thing to look at.
 * `named` is the query's environment, which the read has already checked.
 */
async function afterOverview(
  ctx: ServiceContext<WalletActor>,
  named: string | undefined,
): Promise<NextAction[]> {
  const environmentId = answeredEnvironment(ctx, named);
  if (!(await hasTelemetry(ctx.deps.db, environmentId))) return [sendTelemetryAction(ctx.deps)];
  return [
    readAction(
      ctx.deps,
      "list_problems",
      `/x402/problems?environmentId=${environmentId}`,
      "Problems detected in your telemetry, most recent first.",
    ),
  ];
}

/** The worst live problem of the page is the next thing to inspect. */
async function afterProblems(ctx: ServiceContext<WalletActor>, named: string | undefined, page: ProblemPage) {
  const worst = page.items.find((p) => p.status === "open" || p.status === "regressed");
  if (!worst) return afterOverview(ctx, named);
  const environmentId = answeredEnvironment(ctx, named);
  return [
    readAction(
      ctx.deps,
      "inspect_problem",
      `/x402/problems/${worst.id}?environmentId=${environmentId}`,
      `Stack trace, sample traces and remediation state of "${worst.title}" (${worst.count} occurrences).`,
    ),
  ];
}

/** A live problem can be remediated; a sample trace shows where it happened. */
async function afterProblem(ctx: ServiceContext<WalletActor>, named: string | undefined, problem: Problem) {
  const environmentId = answeredEnvironment(ctx, named);
  const sample = problem.sampleTraceIds[0];
  const next_actions: NextAction[] = [];
  if (problem.status === "open" || problem.status === "regressed") {
    next_actions.push(
      remediateAction(
        ctx.deps,
        problem,
        environmentId,
        "Start a remediation: patchbay investigates, fixes it in a sandbox, runs the repository's tests and opens a pull request for a human to review. Poll it for free with your session token.",
      ),
    );
  }
  if (sample) {
    next_actions.push(
      readAction(
        ctx.deps,
        "get_trace",
        `/x402/traces/${sample}?environmentId=${environmentId}`,
        "The span tree of a trace in which this problem occurred.",
      ),
    );
  }
  return next_actions;
}

export const telemetryRoutes: X402Route[] = [
  {
    method: "GET",
    path: "/x402/services",
    description:
      "Service health over a window: request rate, error rate and p50/p95/p99 latency per service, and when each was last seen.",
    paid: { price: "read", input: ServicesQuery, output: ServiceHealthPageSchema.extend(nextActions) },
    caller: "wallet",
    async handle(c, ctx) {
      const input = validate(ServicesQuery, c.req.query(), "query");
      const page = await getServiceHealth({ ctx, input });
      return c.json({ ...page, next_actions: await afterOverview(ctx, input.environmentId) });
    },
  },
  {
    method: "GET",
    path: "/x402/logs",
    description:
      "Log records in a time range (default: the last hour), filtered by service, minimum severity, text and trace id; newest first, paginated.",
    paid: { price: "read", input: LogsQuery, output: LogPageSchema.extend(nextActions) },
    caller: "wallet",
    async handle(c, ctx) {
      const input = validate(LogsQuery, c.req.query(), "query");
      const page = await searchLogs({ ctx, input });
      return c.json({ ...page, next_actions: await afterOverview(ctx, input.environmentId) });
    },
  },
  {
    method: "GET",
    path: "/x402/traces/:traceId",
    description: "One trace as its span tree (depth first, each span after its parent).",
    paid: {
      price: "read",
      input: EnvironmentQuery,
      pathParams: TraceParamsSchema,
      pathParamsExample: { traceId: "4bf92f3577b34da6a3ce929d0e0e4736" },
      output: TraceSchema.extend(nextActions),
    },
    caller: "wallet",
    async handle(c, ctx) {
      const { environmentId } = validate(EnvironmentQuery, c.req.query(), "query");
      const { traceId } = validate(TraceParamsSchema, { traceId: c.req.param("traceId") }, "path");
      const trace = await getTrace({ ctx, input: { environmentId, traceId } });
      return c.json({ ...trace, next_actions: await afterOverview(ctx, environmentId) });
    },
  },
  {
    method: "GET",
    path: "/x402/problems",
    description:
      "Problems detected in the organisation's telemetry (exceptions and error logs grouped by fingerprint), most recently seen first; filter by status and service; paginated.",
    paid: { price: "read", input: ProblemsQuery, output: ProblemPageSchema.extend(nextActions) },
    caller: "wallet",
    async handle(c, ctx) {
      const input = validate(ProblemsQuery, c.req.query(), "query");
      const page = await listProblems({ ctx, input });
      return c.json({ ...page, next_actions: await afterProblems(ctx, input.environmentId, page) });
    },
  },
  {
    method: "GET",
    path: "/x402/problems/:id",
    description:
      "One problem with its stack trace, sample trace ids (resolvable with /x402/traces/{traceId}) and remediation state.",
    paid: {
      price: "read",
      input: EnvironmentQuery,
      pathParams: ProblemParams,
      output: ProblemSchema.extend(nextActions),
    },
    caller: "wallet",
    async handle(c, ctx) {
      const { environmentId } = validate(EnvironmentQuery, c.req.query(), "query");
      const { id } = validate(ProblemParams, { id: c.req.param("id") }, "path");
      const problem = await getProblem({ ctx, input: { environmentId, problemId: id } });
      return c.json({ ...problem, next_actions: await afterProblem(ctx, environmentId, problem) });
    },
  },
];
