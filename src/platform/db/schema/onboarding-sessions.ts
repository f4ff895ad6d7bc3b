import { index, pgTable, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { environmentRef } from "./environments.ts";
import { organizationRef } from "./organizations.ts";

export const onboardingStates = ["awaiting-telemetry", "awaiting-operator", "ready", "expired"] as const;
export type OnboardingState = (typeof onboardingStates)[number];

/**
 * A guided onboarding session started by `POST /x402/onboard` (DESIGN §7). The state is derived
 * from the organisation's progress each time the session is read; `state` and
 * `state_changed_at` record the last one observed, so the session's history can be followed.
 * The session token is shown once and stored only as its SHA-256.
 */
export const onboardingSessions = pgTable(
  "onboarding_sessions",
  {
    id: text("id").primaryKey(),
    organizationId: organizationRef(),
    environmentId: environmentRef(),
    tokenHash: text("token_hash").notNull().unique(),
    /** The payer who started it (lowercase address). */
    startedBy: text("started_by").notNull(),
    state: text("state", { enum: onboardingStates }).notNull(),
    stateChangedAt: millis("state_changed_at").notNull(),
    createdAt: millis("created_at").notNull(),
    expiresAt: millis("expires_at").notNull(),
  },
  (t) => [index("onboarding_sessions_org_idx").on(t.organizationId, t.expiresAt)],
);
