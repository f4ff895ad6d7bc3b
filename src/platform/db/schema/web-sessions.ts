import { index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { userRef } from "./users.ts";

/**
 * Browser sign-in sessions. The cookie carries a 256-bit secret; only its SHA-256 is stored, so a
 * read of this table cannot be replayed as a cookie. A session belongs to a user, not to an
 * organisation: the organisation comes from the page's URL and the role from the live membership.
 */
export const webSessions = pgTable(
  "web_sessions",
  {
    id: text("id").primaryKey(),
    userId: userRef(),
    secretHash: text("secret_hash").notNull().unique(),
    createdAt: millis("created_at").notNull(),
    /** Refreshed at most once a minute; idle expiry counts from here. */
    lastSeenAt: millis("last_seen_at").notNull(),
    /** Absolute expiry, fixed at sign-in. */
    expiresAt: millis("expires_at").notNull(),
    revokedAt: millis("revoked_at"),
  },
  (t) => [index("web_sessions_user_idx").on(t.userId)],
);

/**
 * Replaced by `sign_in_limits`. Kept while instances of the previous release may still write it
 * during a rolling deploy (docs/deploy.md); drop it in a later release.
 * @deprecated
 */
export const signInThrottle = pgTable("sign_in_throttle", {
  key: text("key").primaryKey(),
  failures: integer("failures").notNull(),
  windowStartedAt: millis("window_started_at").notNull(),
});

/**
 * Sign-in attempts counted per limit key (features/web-sessions/throttle.ts): an (email, client
 * address) pair, an email, or a client address. Emails appear only hashed, and whether or not
 * such a user exists, so the table itself reveals nothing. A row whose `expires_at` has passed
 * counts as empty and is swept hourly.
 */
export const signInLimits = pgTable("sign_in_limits", {
  key: text("key").primaryKey(),
  /** Attempts let through to the password check and not (yet) succeeded. */
  attempts: integer("attempts").notNull(),
  expiresAt: millis("expires_at").notNull(),
  /** Pair keys only: the next attempt is refused before this (the progressive delay). */
  notBefore: millis("not_before"),
});
