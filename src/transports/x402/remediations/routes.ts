import { z } from "@hono/zod-openapi";
import type { ServiceContext } from "../../../context.ts";
import { runOperatorSteps } from "../../../features/agent-onboarding/operator-steps.ts";
import { resolveProblem } from "../../../features/agent-onboarding/resolve-problem.ts";
import { getRemediation } from "../../../features/remediations/get-remediation.ts";
import { describeRemediationProblems } from "../../../features/remediations/list-remediations.ts";
import { readRemediationThread } from "../../../features/remediations/read-remediation-thread.ts";
import { type Remediation, RemediationThreadQuerySchema } from "../../../features/remediations/schemas.ts";
import { startRefusal } from "../../../features/remediations/start-refusal.ts";
import { startInstrumentation, startRemediation } from "../../../features/remediations/start-remediation.ts";
import { REPOSITORY_REFERENCE_PATTERN } from "../../../features/repositories/repository-reference.ts";
import { EXAMPLE_PROBLEM } from "../examples.ts";
import { FREE_READ_AUTH } from "../free-read-access.ts";
import { parseJsonBody, validate } from "../parse-input.ts";
import type { X402Route } from "../route.ts";
import {
  remediationActions,
  StartedInstrumentationSchema,
  StartedSchema,
  started,
  threadActions,
  threadApiUrl,
} from "./actions.ts";
import { startedExample, startedInstrumentationExample } from "./examples.ts";

const environmentId = z.uuid().optional().describe("Default: the organisation's first environment");
const x_assumed_state = z.string().max(8192).optional();

const StartInput = z.object({ environmentId, x_assumed_state }).strict();
const ProblemParams = z.object({ id: z.string().min(1).max(64) });

const ResolveInput = z
  .object({
    environmentId,
    problemId: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe(
        "The problem to fix. Default: the most recently seen open or regressed problem no run is working on",
      ),
    x_assumed_state,
  })
  .strict();

const InstrumentationInput = z
  .object({
    service: z
      .string()
      .trim()
      .min(1)
      .max(256)
      .describe("The service to instrument (its OpenTelemetry `service.name`)"),
    repository: z
      .string()
      .min(1)
      .max(256)
      // Declared for readers of the catalog; the verb checks it and answers invalid_repository_name.
      .meta({ pattern: REPOSITORY_REFERENCE_PATTERN })
      .optional()
      .describe(
        "Where its code lives: a GitHub `owner/name`, or a registered repository's id (`rep_…`). Default: the repository a human mapped to the service. A GitHub repository not registered yet makes the run wait for a human to install the App and select it (operatorSteps); anything else is 400 invalid_repository_name",
      ),
    environmentId,
  })
  .strict();

/**
 * The state of the problem a `fix` run works on (open, resolved, regressed, ignored): free with
 * the run, so an agent sees its problem resolved, or back, without paying for the problem read.
 */
async function problemOf(ctx: ServiceContext, run: Remediation) {
  if (!run.problemId) return null;
  const input = { environmentId: run.environmentId, problemIds: [run.problemId] };
  return (await describeRemediationProblems({ ctx, input })).get(run.problemId) ?? null;
}

/**
 * Step 5 of the agent flow (spec 1B, 4D): start a remediation (paid), poll it and read its thread
 * for free (the session token, or the paying wallet signed in) until a pull request awaits a
 * human. Refusals are ≥ 400, so never charged.
 */
export const remediationRoutes: X402Route[] = [
  {
    method: "POST",
    path: "/x402/problems/:id/remediations",
    description:
      "Start an asynchronous remediation of a problem: investigation, a fix in a sandbox, the repository's tests, and a pull request for a human. Returns remediationId, threadUrl and status.",
    paid: {
      price: "remediation",
      input: StartInput,
      pathParams: ProblemParams,
      pathParamsExample: { id: EXAMPLE_PROBLEM.id },
      output: StartedSchema,
      outputExample: startedExample,
    },
    unavailable: startRefusal,
    caller: "wallet",
    async handle(c, ctx) {
      const input = { ...(await parseJsonBody(c, StartInput)), problemId: c.req.param("id") ?? "" };
      const { run, problem } = await startRemediation({ ctx, input });
      const steps = await runOperatorSteps(ctx.deps, ctx.actor.organizationId, run);
      return c.json(started(ctx.deps, run, { problem }, steps), 201);
    },
  },
  {
    method: "GET",
    path: "/x402/remediations/:id",
    description:
      "Poll a remediation: status, progress events, its problem's state, operatorSteps (what a human still does, each with its state and a link while pending), prUrl when ready.",
    auth: FREE_READ_AUTH,
    caller: "reader",
    async handle(c, ctx) {
      const run = await getRemediation({ ctx, input: { remediationId: c.req.param("id") ?? "" } });
      const [problem, operatorSteps] = await Promise.all([
        problemOf(ctx, run),
        runOperatorSteps(ctx.deps, ctx.actor.organizationId, run),
      ]);
      return c.json(
        {
          ...run,
          threadApiUrl: threadApiUrl(ctx.deps, run.id),
          problem,
          operatorSteps,
          next_actions: remediationActions(ctx.deps, run, operatorSteps, problem),
        },
        200,
        { "cache-control": "no-store" },
      );
    },
  },
  {
    method: "GET",
    path: "/x402/remediations/:id/thread",
    description:
      "A remediation's thread as JSON (what threadUrl shows people): its progress, the agent's steps and people's decisions as messages, oldest first; `after` a message id reads only newer ones.",
    auth: FREE_READ_AUTH,
    caller: "reader",
    async handle(c, ctx) {
      const query = validate(RemediationThreadQuerySchema, c.req.query(), "query");
      const input = { ...query, remediationId: c.req.param("id") ?? "" };
      const thread = await readRemediationThread({ ctx, input });
      return c.json({ ...thread, next_actions: threadActions(ctx.deps, thread) }, 200, {
        "cache-control": "no-store",
      });
    },
  },
  {
    method: "POST",
    path: "/x402/resolve",
    description:
      "Shortcut once telemetry is flowing: start a remediation of the most pressing open problem (or the one named) — investigation, a fix in a sandbox, the tests, a pull request for a human. Returns remediationId, threadUrl, status and the problem chosen.",
    paid: { price: "remediation", input: ResolveInput, output: StartedSchema, outputExample: startedExample },
    unavailable: startRefusal,
    caller: "wallet",
    async handle(c, ctx) {
      const { run, problem } = await resolveProblem({ ctx, input: await parseJsonBody(c, ResolveInput) });
      const steps = await runOperatorSteps(ctx.deps, ctx.actor.organizationId, run);
      return c.json(started(ctx.deps, run, { problem }, steps), 201);
    },
  },
  {
    // Spec 4D: a run of kind `instrumentation` for a repository and service, polled like a
    // remediation; until a human has registered that repository it waits for them.
    method: "POST",
    path: "/x402/instrumentation/pr",
    description:
      "Ask for a pull request that adds OpenTelemetry instrumentation (OTLP exporters configured from the environment) to a service in a repository (a GitHub owner/name or a registered rep_… id; default: the service's); poll it like a remediation. operatorSteps say what a human still has to do.",
    paid: {
      price: "instrumentation",
      input: InstrumentationInput,
      inputExample: { service: "checkout", repository: "acme/checkout" },
      output: StartedInstrumentationSchema,
      outputExample: startedInstrumentationExample,
    },
    unavailable: startRefusal,
    caller: "wallet",
    async handle(c, ctx) {
      const run = await startInstrumentation({ ctx, input: await parseJsonBody(c, InstrumentationInput) });
      const about = {
        service: run.service,
        ...(run.requestedRepository ? { repository: run.requestedRepository } : {}),
      };
      const steps = await runOperatorSteps(ctx.deps, ctx.actor.organizationId, run);
      return c.json(started(ctx.deps, run, about, steps), 201);
    },
  },
];
