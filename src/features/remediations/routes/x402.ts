import { z } from "@hono/zod-openapi";
import type { Deps } from "../../../deps.ts";
import { parseJsonBody } from "../../../x402/parse-input.ts";
import type { X402Route } from "../../../x402/route.ts";
import type { NextAction } from "../../agent-onboarding/next-action.ts";
import { NextActionsSchema } from "../../agent-onboarding/schemas.ts";
import { bearerToken, sessionOrganization } from "../../agent-onboarding/session-organization.ts";
import { walletOf } from "../../agent-onboarding/wallet.ts";
import { walletScope } from "../../agent-onboarding/wallet-environment.ts";
import { paymentOf } from "../../x402/verified-payment.ts";
import { getRemediation } from "../get-remediation.ts";
import type { RemediationSchema } from "../schemas.ts";
import { startRemediation } from "../start-remediation.ts";

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
const StartedSchema = z.object({
  remediationId: z.string(),
  threadUrl: z.url(),
  status: z.literal("queued"),
  next_actions: NextActionsSchema,
});
const ProblemParams = z.object({ id: z.string().min(1).max(64) });

function pollAction(deps: Deps, remediationId: string): NextAction {
  return {
    action: "poll_remediation",
    method: "GET",
    href: `${deps.config.baseUrl}/x402/remediations/${remediationId}`,
    price: "free",
    description:
      "Poll with `Authorization: Bearer <session token>` (from POST /x402/onboard) every few seconds until `prUrl` appears or the run ends.",
  };
}

/** What the agent does next for a run in `status`. */
function remediationActions(deps: Deps, run: z.infer<typeof RemediationSchema>): NextAction[] {
  if (run.status === "awaiting-approval" && run.approval) {
    return [
      {
        action: "request_operator_approval",
        method: "GET",
        href: run.approval.approvalUrl,
        price: "free",
        description: `A human must approve: ${run.approval.message} Give them this link and keep polling.`,
      },
      pollAction(deps, run.remediationId),
    ];
  }
  if (run.status === "awaiting-review" && run.prUrl) {
    return [
      {
        action: "request_review",
        method: "GET",
        href: run.prUrl,
        price: "free",
        description:
          "The fix is ready for a human to review and merge; patchbay never merges. Poll to see it merged or closed.",
      },
      pollAction(deps, run.remediationId),
    ];
  }
  if (["merged", "closed", "failed", "cancelled"].includes(run.status)) return [];
  return [pollAction(deps, run.remediationId)];
}

export const remediationRoutes: X402Route[] = [
  {
    method: "POST",
    path: "/x402/problems/:id/remediations",
    description:
      "Start an asynchronous remediation of a problem: investigation, a fix in a sandbox, the repository's tests, and a pull request for a human. Returns remediationId, threadUrl and status.",
    paid: { price: "remediation", input: StartInput, pathParams: ProblemParams, output: StartedSchema },
    async handle(c) {
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
    async handle(c) {
      const deps = c.get("deps");
      const organizationId = await sessionOrganization(deps, bearerToken(c.req.header("authorization")));
      const run = await getRemediation({ deps, organizationId, remediationId: c.req.param("id") ?? "" });
      return c.json({ ...run, next_actions: remediationActions(deps, run) }, 200, {
        "cache-control": "no-store",
      });
    },
  },
];
