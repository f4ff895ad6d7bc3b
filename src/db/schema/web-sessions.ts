import { index, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { users } from "./users.ts";

/**
 * Browser sign-in sessions. The cookie carries a 256-bit secret; only its SHA-256 is stored, so a
 * read of this table cannot be replayed as a cookie. A session belongs to a user, not to an
 * organisation: the organisation comes from the page's URL and the role from the live membership.
 */
export const webSessions = pgTable(
  "web_sessions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    secretHash: text("secret_hash").notNull().unique(),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull(),
    /** Refreshed at most once a minute; idle expiry counts from here. */
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true, precision: 3 }).notNull(),
    /** Absolute expiry, fixed at sign-in. */
    expiresAt: timestamp("expires_at", { withTimezone: true, precision: 3 }).notNull(),
    revokedAt: timestamp("revoked_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [index("web_sessions_user_idx").on(t.userId)],
);

/**
 * Failed sign-ins per throttle key (a hashed email, or a client address) in the current window.
 * Keyed by the email whether or not such a user exists, so the throttle itself reveals nothing.
 */
export const signInThrottle = pgTable("sign_in_throttle", {
  key: text("key").primaryKey(),
  failures: integer("failures").notNull(),
  windowStartedAt: timestamp("window_started_at", { withTimezone: true, precision: 3 }).notNull(),
});
