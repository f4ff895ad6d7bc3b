import type { Db } from "../../db/client.ts";
import type { OnboardingState } from "../../db/schema/onboarding-sessions.ts";
import { hasTelemetry } from "../telemetry/queries/has-telemetry.ts";
import { isClaimed } from "./organization-progress.ts";

export type SessionFacts = { organizationId: string; environmentId: string; expiresAt: Date };

/**
 * Where a session stands (DESIGN §7): telemetry first (the agent can do that alone), then a
 * human claims the organisation, then it is ready. Derived from the organisation's progress on
 * every read, so it can never disagree with it.
 */
export async function deriveSessionState(db: Db, session: SessionFacts, now: Date): Promise<OnboardingState> {
  if (session.expiresAt.getTime() <= now.getTime()) return "expired";
  if (!(await hasTelemetry(db, session.environmentId))) return "awaiting-telemetry";
  if (!(await isClaimed(db, session.organizationId))) return "awaiting-operator";
  return "ready";
}
