import { and, eq } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import type { OnboardingState } from "../../platform/db/schema/onboarding-sessions.ts";
import { onboardingSessions } from "../../platform/db/schema/onboarding-sessions.ts";
import { approvalUrl } from "./approval-link.ts";
import { sessionActions } from "./next-actions.ts";
import type { OnboardingSession } from "./schemas.ts";
import { deriveSessionState } from "./session-state.ts";

export type SessionRow = typeof onboardingSessions.$inferSelect;

/**
 * The session as an agent sees it now. A state that moved since the last read is recorded
 * (conditionally, so concurrent readers record a move once).
 */
export async function viewSession(deps: Deps, row: SessionRow): Promise<OnboardingSession> {
  const now = deps.clock();
  const { state, operatorSteps } = await deriveSessionState(deps.db, row, now);
  const changedAt = state === row.state ? row.stateChangedAt : await recordState(deps, row, state, now);
  const link = approvalUrl(deps, row.id);
  return {
    sessionId: row.id,
    state,
    organizationId: row.organizationId,
    environmentId: row.environmentId,
    createdAt: row.createdAt.toISOString(),
    stateChangedAt: changedAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    ...(operatorSteps ? { approvalUrl: link, operatorSteps } : {}),
    next_actions: await sessionActions(deps, { ...row, approvalUrl: link, operatorSteps }, state),
  };
}

async function recordState(deps: Deps, row: SessionRow, state: OnboardingState, now: Date): Promise<Date> {
  await deps.db
    .update(onboardingSessions)
    .set({ state, stateChangedAt: now })
    .where(and(eq(onboardingSessions.id, row.id), eq(onboardingSessions.state, row.state)));
  return now;
}
