import { lt, or } from "drizzle-orm";
import type { Db } from "../../platform/db/client.ts";
import { invitations } from "../../platform/db/schema/invitations.ts";
import { webSessions } from "../../platform/db/schema/web-sessions.ts";
import { SESSION_IDLE_MS } from "./session-policy.ts";
import { sweepSignInThrottle } from "./throttle.ts";

/** Ended sessions and spent invitations are kept a day (for support questions), then deleted. */
const KEEP_MS = 24 * 60 * 60 * 1000;

/** Hourly housekeeping (main.ts): ended sessions, spent invitations, stale throttle windows. */
export async function sweepWebSessions(db: Db, now: Date): Promise<void> {
  const before = new Date(now.getTime() - KEEP_MS);
  await db
    .delete(webSessions)
    .where(
      or(
        lt(webSessions.expiresAt, before),
        lt(webSessions.revokedAt, before),
        lt(webSessions.lastSeenAt, new Date(before.getTime() - SESSION_IDLE_MS)),
      ),
    );
  await db
    .delete(invitations)
    .where(
      or(
        lt(invitations.expiresAt, before),
        lt(invitations.revokedAt, before),
        lt(invitations.acceptedAt, before),
      ),
    );
  await sweepSignInThrottle(db, now);
}
