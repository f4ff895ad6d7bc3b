import { z } from "@hono/zod-openapi";
import type { ServiceContext } from "../../../context.ts";
import { resolveProblem } from "../../../features/agent-onboarding/resolve-problem.ts";
import { getRemediation } from "../../../features/remediations/get-remediation.ts";
import { describeRemediationProblems } from "../../../features/remediations/list-remediations.ts";
import { readRemediationThread } from "../../../features/remediations/read-remediation-thread.ts";
import { type Remediation, RemediationThreadQuerySchema } from "../../../features/remediations/schemas.ts";
import { startInstrumentation, startRemediation } from "../../../features/remediations/start-remediation.ts";
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
      .describe(
        "The service to instrument (its OpenTelemetry `service.name`); the repository is the one a human mapped to it",
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
    paid: { price: "remediation", input: StartInput, pathParams: ProblemParams, output: StartedSchema },
    caller: "wallet",
    async handle(c, ctx) {
      const input = { ...(await parseJsonBody(c, StartInput)), problemId: c.req.param("id") ?? "" };
      const { run, problem } = await startRemediation({ ctx, input });
      return c.json(started(ctx.deps, run, { problem }), 201);
    },
  },
  {
    method: "GET",
    path: "/x402/remediations/:id",
    description:
      "Poll a remediation: status, progress events, its problem's state, the approval link while a human is needed, prUrl when ready.",
    auth: FREE_READ_AUTH,
    caller: "reader",
    async handle(c, ctx) {
      const run = await getRemediation({ ctx, input: { remediationId: c.req.param("id") ?? "" } });
      const problem = await problemOf(ctx, run);
      return c.json(
        {
          ...run,
          threadApiUrl: threadApiUrl(ctx.deps, run.id),
          problem,
          next_actions: remediationActions(ctx.deps, run),
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
    paid: { price: "remediation", input: ResolveInput, output: StartedSchema },
    caller: "wallet",
    async handle(c, ctx) {
      const { run, problem } = await resolveProblem({ ctx, input: await parseJsonBody(c, ResolveInput) });
      return c.json(started(ctx.deps, run, { problem }), 201);
    },
  },
  {
    // Spec 4D: a run of kind `instrumentation`, polled like a remediation; without a repository
    // for the service it waits for a human.
    method: "POST",
    path: "/x402/instrumentation/pr",
    description:
      "Ask for a pull request that adds OpenTelemetry instrumentation (OTLP exporters configured from the environment) to a service's repository; poll it like a remediation.",
    paid: {
      price: "instrumentation",
      input: InstrumentationInput,
      inputExample: { service: "checkout" },
      output: StartedInstrumentationSchema,
    },
    caller: "wallet",
    async handle(c, ctx) {
      const run = await startInstrumentation({ ctx, input: await parseJsonBody(c, InstrumentationInput) });
      return c.json(started(ctx.deps, run, { service: run.service }), 201);
    },
  },
];
