import { z } from "@hono/zod-openapi";
import type { Deps } from "../../../deps.ts";
import { operatorStepAction } from "../../../features/agent-onboarding/operator-steps.ts";
import {
  pollRemediationAction,
  remediateAction,
} from "../../../features/agent-onboarding/problem-assumption.ts";
import {
  FREE_READ_HOW,
  type NextAction,
  NextActionsSchema,
  nextAction,
  type OperatorStep,
  OperatorStepsSchema,
} from "../../../features/agent-onboarding/schemas.ts";
import type { Remediation, RemediationThread } from "../../../features/remediations/schemas.ts";
import { terminalRemediationStatuses } from "../../../platform/db/schema/remediations.ts";

const ENDED: readonly string[] = terminalRemediationStatuses;

const Started = z.object({
  remediationId: z.string(),
  threadUrl: z.url().describe("The run's web page, for a signed-in member of the organisation"),
  threadApiUrl: z
    .url()
    .describe("The run's thread as JSON for agents: free, like polling (session token or wallet sign-in)"),
  status: z.literal("queued"),
  operatorSteps: OperatorStepsSchema.describe(
    "What a human does for this run, each step with its state: claim_organization, install_app, select_repositories (the run waits for these before it starts), approve_change (high-risk changes only), review_pull_request. Poll the run to see them move.",
  ),
});

/** The run's thread as JSON (`GET /x402/remediations/{id}/thread`): what `threadUrl` shows people. */
export const threadApiUrl = (deps: Pick<Deps, "config">, remediationId: string) =>
  `${deps.config.baseUrl}/x402/remediations/${remediationId}/thread`;

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
  threadApiUrl: threadApiUrl(deps, run.id),
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
    `Poll every few seconds until \`prUrl\` appears or the run ends; free ${FREE_READ_HOW}.`,
  );

/**
 * What the agent does next for a run in `status`: a pending human step's link first. A merged fix
 * is watched: poll it until the watch decides; regressed after merge, a new remediation is offered.
 */
export function remediationActions(
  deps: Deps,
  run: Remediation,
  steps: OperatorStep[],
  problem?: { status: string } | null,
): NextAction[] {
  if (run.status === "merged" && run.watch?.state === "watching") {
    return [
      pollRemediationAction(
        deps,
        run.remediationId,
        "The fix is merged and its problem is watched: poll to learn whether it regressed after merge or was closed as fixed.",
      ),
    ];
  }
  if (run.status === "merged" && run.watch?.state === "regressed" && run.problemId && problem) {
    const again = remediateAction(
      deps,
      { id: run.problemId, status: problem.status, remediationId: run.id, remediationState: run.status },
      run.environmentId,
      `Regressed after merge: ${run.watch.evidence ?? "the problem occurred again"} Start a new remediation of the problem.`,
    );
    return again ? [again] : [];
  }
  if (ENDED.includes(run.status)) return [];
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
  if (run.status === "awaiting-review" && run.verification) {
    return [
      pollRemediationAction(
        deps,
        run.remediationId,
        `The pull request is ${run.verification.state}${run.verification.reason ? ` (${run.verification.reason})` : ""}: tell your operator, who reviews and merges it; poll to follow it (free ${FREE_READ_HOW}).`,
      ),
    ];
  }
  return [pollAction(deps, run.remediationId)];
}

/** After a page of a thread: the rest of it; once read up, polling the run and the newer messages. */
export function threadActions(deps: Deps, thread: RemediationThread): NextAction[] {
  const last = thread.messages.at(-1)?.id;
  const more = (description: string) =>
    nextAction(
      deps,
      `GET /x402/remediations/${thread.remediationId}/thread${last === undefined ? "" : `?after=${last}`}`,
      "free",
      { action: "read_thread", description },
    );
  if (thread.hasMore) return [more("The next messages of the thread.")];
  if (ENDED.includes(thread.status)) return [];
  return [
    pollAction(deps, thread.remediationId),
    more("Messages newer than the last one read, once the run moves on."),
  ];
}
