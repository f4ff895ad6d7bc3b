import { and, eq, isNull } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import { users } from "../../platform/db/schema/users.ts";
import { webSessions } from "../../platform/db/schema/web-sessions.ts";
import { SESSION_IDLE_MS, SESSION_TOUCH_MS } from "./session-policy.ts";
import { hashSessionSecret } from "./session-secret.ts";

/** A signed-in person, as the web UI (and later the OAuth pages) see them. */
export type WebUser = {
  sessionId: string;
  userId: string;
  email: string;
  displayName: string | null;
  /** Absolute expiry of the session. */
  expiresAt: Date;
};

/**
 * The cookie's secret → the signed-in user, or null when the session is unknown, revoked, past
 * its absolute expiry or idle too long. Activity is recorded at most once a minute, off the
 * request's path.
 */
export async function resolveWebSession(
  deps: Pick<Deps, "db" | "clock" | "logger">,
  secret: string,
): Promise<WebUser | null> {
  if (secret.length === 0 || secret.length > 128) return null;
  const [row] = await deps.db
    .select({
      id: webSessions.id,
      userId: webSessions.userId,
      lastSeenAt: webSessions.lastSeenAt,
      expiresAt: webSessions.expiresAt,
      email: users.email,
      displayName: users.displayName,
    })
    .from(webSessions)
    .innerJoin(users, eq(users.id, webSessions.userId))
    .where(and(eq(webSessions.secretHash, hashSessionSecret(secret)), isNull(webSessions.revokedAt)))
    .limit(1);
  if (!row) return null;
  const now = deps.clock();
  if (row.expiresAt <= now) return null;
  if (row.lastSeenAt.getTime() + SESSION_IDLE_MS <= now.getTime()) return null;
  if (now.getTime() - row.lastSeenAt.getTime() > SESSION_TOUCH_MS) {
    // Fire and forget: bookkeeping must not fail or slow the page it describes.
    deps.db
      .update(webSessions)
      .set({ lastSeenAt: now })
      .where(eq(webSessions.id, row.id))
      .catch((err: unknown) => deps.logger.warn({ err, sessionId: row.id }, "last_seen_at update failed"));
  }
  return {
    sessionId: row.id,
    userId: row.userId,
    email: row.email,
    displayName: row.displayName,
    expiresAt: row.expiresAt,
  };
}
