import { z } from "@hono/zod-openapi";
import { bearerToken, sessionOrganization } from "../../../features/agent-onboarding/session-organization.ts";
import { walletOf } from "../../../features/agent-onboarding/wallet.ts";
import { walletScope } from "../../../features/agent-onboarding/wallet-environment.ts";
import { getRemediation } from "../../../features/remediations/get-remediation.ts";
import { startRemediation } from "../../../features/remediations/start-remediation.ts";
import { parseJsonBody } from "../parse-input.ts";
import { paymentOf } from "../payment-gate.ts";
import type { X402Route } from "../route.ts";
import { pollAction, remediationActions, StartedSchema } from "./actions.ts";
import { instrumentationRoute } from "./instrumentation.ts";
import { resolveRoute } from "./resolve.ts";

/**
 * Step 5 of the agent flow (spec 1B, 4D): start a remediation of a problem (paid) and poll it
 * for free with the onboarding session token until a pull request is ready for a human.
 * patchbay never merges.
 */
const StartInput = z
  .object({
    environmentId: z.uuid().optional().describe("Default: the organisation's first environment"),
    x_assumed_state: z.string().max(8192).optional(),
  })
  .strict();
const ProblemParams = z.object({ id: z.string().min(1).max(64) });

export const remediationRoutes: X402Route[] = [
  {
    method: "POST",
    path: "/x402/problems/:id/remediations",
    description:
      "Start an asynchronous remediation of a problem: investigation, a fix in a sandbox, the repository's tests, and a pull request for a human. Returns remediationId, threadUrl and status.",
    paid: { price: "remediation", input: StartInput, pathParams: ProblemParams, output: StartedSchema },
    caller: "wallet",
    async handle(c, ctx) {
      const deps = c.get("deps");
      const input = await parseJsonBody(c, StartInput);
      const payment = paymentOf(c);
      const scope = await walletScope(deps, walletOf(payment), input.environmentId);
      const started = await startRemediation({
        deps,
        organizationId: scope.organizationId,
        environmentId: scope.environmentId,
        problemId: c.req.param("id") ?? "",
        requestedBy: `wallet:${payment.network}:${payment.payer.toLowerCase()}`,
      });
      return c.json({ ...started, next_actions: [pollAction(deps, started.remediationId)] }, 201);
    },
  },
  {
    method: "GET",
    path: "/x402/remediations/:id",
    description:
      "Poll a remediation: status, progress events, the approval link while a human is needed, prUrl when ready.",
    auth: "Authorization: Bearer <session token>",
    caller: "session",
    async handle(c, ctx) {
      const deps = c.get("deps");
      const organizationId = await sessionOrganization(deps, bearerToken(c.req.header("authorization")));
      const run = await getRemediation({ deps, organizationId, remediationId: c.req.param("id") ?? "" });
      return c.json({ ...run, next_actions: remediationActions(deps, run) }, 200, {
        "cache-control": "no-store",
      });
    },
  },
  resolveRoute,
  instrumentationRoute,
];
