import { index, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { environments } from "./environments.ts";
import { organizations } from "./organizations.ts";

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
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    environmentId: uuid("environment_id")
      .notNull()
      .references(() => environments.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull().unique(),
    /** The payer who started it (lowercase address). */
    startedBy: text("started_by").notNull(),
    state: text("state", { enum: onboardingStates }).notNull(),
    stateChangedAt: timestamp("state_changed_at", { withTimezone: true, precision: 3 }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index("onboarding_sessions_org_idx").on(t.organizationId, t.expiresAt)],
);
