import { z } from "@hono/zod-openapi";
import type { Deps } from "../../../deps.ts";
import { operatorStepAction } from "../../../features/agent-onboarding/operator-steps.ts";
import { pollRemediationAction } from "../../../features/agent-onboarding/problem-assumption.ts";
import {
  type NextAction,
  NextActionsSchema,
  nextAction,
  type OperatorStep,
  OperatorStepsSchema,
} from "../../../features/agent-onboarding/schemas.ts";
import type { Remediation } from "../../../features/remediations/schemas.ts";

const Started = z.object({
  remediationId: z.string(),
  threadUrl: z.url(),
  status: z.literal("queued"),
  operatorSteps: OperatorStepsSchema.describe(
    "What a human does for this run, each step with its state: claim_organization, install_app, select_repositories (the run waits for these before it starts), approve_change (high-risk changes only), review_pull_request. Poll the run to see them move.",
  ),
});

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
  repository: z.string().optional().describe("The repository named in the request, as named"),
  next_actions: NextActionsSchema,
});

/**
 * A paid start's answer: the queued run, `about` it (its problem or service), the human steps it
 * needs, and how to follow it — the link of a step a human must take first, when one is pending.
 */
export const started = (
  deps: Deps,
  run: Remediation,
  about: Record<string, unknown>,
  operatorSteps: OperatorStep[],
) => ({
  remediationId: run.id,
  threadUrl: run.threadUrl,
  status: run.status,
  ...about,
  operatorSteps,
  next_actions: [...optional(operatorStepAction(deps, operatorSteps)), pollAction(deps, run.id)],
});

const optional = <T>(value: T | undefined): T[] => (value === undefined ? [] : [value]);

const pollAction = (deps: Deps, remediationId: string) =>
  pollRemediationAction(
    deps,
    remediationId,
    "Poll with `Authorization: Bearer <session token>` (from POST /x402/onboard) every few seconds until `prUrl` appears or the run ends.",
  );

/** What the agent does next for a run in `status`: a pending human step's link first. */
export function remediationActions(deps: Deps, run: Remediation, steps: OperatorStep[]): NextAction[] {
  if (["merged", "closed", "failed", "cancelled"].includes(run.status)) return [];
  const human = operatorStepAction(deps, steps);
  if (human) return [human, pollAction(deps, run.remediationId)];
  if (run.status === "awaiting-approval" && run.approval) {
    // No step link (an unclaimed organisation without an open onboarding session): the run's page.
    return [
      nextAction(deps, `GET ${run.approval.approvalUrl}`, "free", {
        action: "request_operator_approval",
        description: `A human must approve: ${run.approval.message} Give them this link and keep polling.`,
      }),
      pollAction(deps, run.remediationId),
    ];
  }
  return [pollAction(deps, run.remediationId)];
}
