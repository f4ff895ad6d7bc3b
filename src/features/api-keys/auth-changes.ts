import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Deps } from "../../deps.ts";
import type { DatabaseHandle, Db, Subscription } from "../../platform/db/client.ts";
import type { Logger } from "../../platform/logging/logger.ts";
import type { AuthCache } from "./auth-cache.ts";

/** The PostgreSQL channel on which every instance hears about changes to access. */
export const AUTH_CHANGED_CHANNEL = "patchbay_auth_changed";

const AuthChangeSchema = z.object({ organizationId: z.string(), token: z.string() });
type AuthChange = z.infer<typeof AuthChangeSchema>;

/** What `notifyAuthChanged` hands back; await `delivered()` once the transaction committed. */
export type AuthChangeReceipt = { delivered(): Promise<void> };

/** How long a change waits for its own notification to come back before returning anyway. */
const DELIVERY_WAIT_MS = 1_000;

/**
 * Call inside the transaction of any change to who may do what in an organisation: revoking a
 * key, changing its permissions, changing or removing a membership. `pg_notify` is
 * transactional, so every instance (this one included) hears of it when the change commits,
 * and not at all if it rolls back; each then drops the organisation's cached keys.
 *
 * This instance also drops them at once and caches none for the organisation until its own
 * notification comes back, so a request it serves after the change never sees the old answer.
 * Other instances stop using the old answer when the notification reaches them. PostgreSQL
 * signals every listener at the same moment, so awaiting `receipt.delivered()` after the commit
 * (before answering the caller) means the others have, all but surely, heard it too by the
 * time the caller's next request arrives. Forgetting to await it costs only that margin.
 */
export async function notifyAuthChanged(
  tx: Db,
  deps: Pick<Deps, "authCache">,
  change: { organizationId: string },
): Promise<AuthChangeReceipt> {
  const payload: AuthChange = { organizationId: change.organizationId, token: randomUUID() };
  const cache = deps.authCache;
  cache?.hold(payload.organizationId, payload.token);
  await tx.execute(sql`select pg_notify(${AUTH_CHANGED_CHANNEL}, ${JSON.stringify(payload)})`);
  return {
    delivered: () => cache?.delivered(payload.token, DELIVERY_WAIT_MS) ?? Promise.resolve(),
  };
}

/**
 * Connects a cache to the notifications. The cache is trusted only while LISTEN is in force:
 * when the connection drops, everything cached is dropped and every request reads the
 * database until LISTEN is back (a notification sent in between would otherwise be missed).
 */
export function listenForAuthChanges(
  database: DatabaseHandle,
  cache: AuthCache,
  logger: Logger,
): Promise<Subscription> {
  let lostSince: number | undefined;
  return database.listen(AUTH_CHANGED_CHANNEL, {
    onNotify(payload) {
      const change = parseChange(payload);
      if (!change) {
        logger.warn("unreadable auth-change notification: dropping every cached API key");
        cache.clear();
        return;
      }
      cache.dropOrganization(change.organizationId);
      cache.release(change.token);
    },
    onListening() {
      cache.setTrusted(true);
      if (lostSince !== undefined) {
        logger.info({ afterMs: Math.round(performance.now() - lostSince) }, "auth-change listener is back");
        lostSince = undefined;
      }
    },
    onLost(err) {
      cache.setTrusted(false);
      lostSince = performance.now();
      logger.warn(
        { err },
        "auth-change listener lost: API keys are read from the database on every request until it is back",
      );
    },
  });
}

function parseChange(payload: string): AuthChange | undefined {
  try {
    return AuthChangeSchema.parse(JSON.parse(payload));
  } catch {
    return undefined;
  }
}
