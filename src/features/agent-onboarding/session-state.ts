import type { Db } from "../../platform/db/client.ts";
import type { OnboardingState } from "../../platform/db/schema/onboarding-sessions.ts";
import { hasTelemetry } from "../telemetry/queries/has-telemetry.ts";
import { type OperatorStep, operatorSteps } from "./organization-progress.ts";

export type SessionFacts = { organizationId: string; environmentId: string; expiresAt: Date };

export type SessionProgress = { state: OnboardingState; operatorSteps?: OperatorStep[] };

/**
 * Where a session stands (DESIGN §7): telemetry first (the agent can do that alone), then a
 * human claims the organisation and connects a repository (registers a path or installs the
 * source-hosting app and selects repositories), then it is ready. Derived from the
 * organisation's progress on every read, so it can never disagree with it.
 */
export async function deriveSessionState(db: Db, session: SessionFacts, now: Date): Promise<SessionProgress> {
  if (session.expiresAt.getTime() <= now.getTime()) return { state: "expired" };
  if (!(await hasTelemetry(db, session.environmentId))) return { state: "awaiting-telemetry" };
  const steps = await operatorSteps(db, session);
  if (steps.some((s) => !s.done)) return { state: "awaiting-operator", operatorSteps: steps };
  return { state: "ready" };
}
