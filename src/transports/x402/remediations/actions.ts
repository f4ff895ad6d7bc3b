import { z } from "@hono/zod-openapi";
import type { Deps } from "../../../deps.ts";
import { pollRemediationAction } from "../../../features/agent-onboarding/problem-assumption.ts";
import {
  type NextAction,
  NextActionsSchema,
  nextAction,
} from "../../../features/agent-onboarding/schemas.ts";
import type { Remediation } from "../../../features/remediations/schemas.ts";

const Started = z.object({ remediationId: z.string(), threadUrl: z.url(), status: z.literal("queued") });

/** The first answer of a paid start (`/x402/problems/{id}/remediations`, `/x402/resolve`). */
export const StartedSchema = Started.extend({
  problem: z
    .object({ id: z.string(), title: z.string(), service: z.string() })
    .describe("The problem the run fixes"),
  next_actions: NextActionsSchema,
});

/** The first answer of `/x402/instrumentation/pr`. */
export const StartedInstrumentationSchema = Started.extend({
  service: z.string(),
  next_actions: NextActionsSchema,
});

/** A paid start's answer: the queued run, `about` it (its problem or service), and how to follow it. */
export const started = (deps: Deps, run: Remediation, about: Record<string, unknown>) => ({
  remediationId: run.id,
  threadUrl: run.threadUrl,
  status: run.status,
  ...about,
  next_actions: [pollAction(deps, run.id)],
});

const pollAction = (deps: Deps, remediationId: string) =>
  pollRemediationAction(
    deps,
    remediationId,
    "Poll with `Authorization: Bearer <session token>` (from POST /x402/onboard) every few seconds until `prUrl` appears or the run ends.",
  );

/** What the agent does next for a run in `status`. */
export function remediationActions(deps: Deps, run: Remediation): NextAction[] {
  if (run.status === "awaiting-approval" && run.approval) {
    return [
      nextAction(deps, `GET ${run.approval.approvalUrl}`, "free", {
        action: "request_operator_approval",
        description: `A human must approve: ${run.approval.message} Give them this link and keep polling.`,
      }),
      pollAction(deps, run.remediationId),
    ];
  }
  if (run.status === "awaiting-review" && run.prUrl) {
    return [
      nextAction(deps, `GET ${run.prUrl}`, "free", {
        action: "request_review",
        description:
          "The fix is ready for a human to review and merge; patchbay never merges. Poll to see it merged or closed.",
      }),
      pollAction(deps, run.remediationId),
    ];
  }
  if (["merged", "closed", "failed", "cancelled"].includes(run.status)) return [];
  return [pollAction(deps, run.remediationId)];
}
