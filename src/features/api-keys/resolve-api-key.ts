import { and, eq, isNull, sql } from "drizzle-orm";
import type { Actor } from "../../context.ts";
import type { Db } from "../../db/client.ts";
import { apiKeys } from "../../db/schema/api-keys.ts";
import { memberships } from "../../db/schema/users.ts";
import type { Deps } from "../../deps.ts";
import { hashApiKeySecret } from "./key-secret.ts";
import { isPermission } from "./permissions.ts";

/** Refresh `last_used_at` at most this often: a write per request would halve read throughput. */
const LAST_USED_GRANULARITY_MS = 60_000;

/** Built once per database handle: no SQL building per request, planned once per connection. */
const buildLookup = (db: Db) =>
  db
    .select({
      id: apiKeys.id,
      organizationId: apiKeys.organizationId,
      userId: apiKeys.userId,
      permissions: apiKeys.permissions,
      lastUsedAt: apiKeys.lastUsedAt,
      role: memberships.role,
    })
    .from(apiKeys)
    .innerJoin(
      memberships,
      and(eq(memberships.organizationId, apiKeys.organizationId), eq(memberships.userId, apiKeys.userId)),
    )
    .where(and(eq(apiKeys.secretHash, sql.placeholder("secretHash")), isNull(apiKeys.revokedAt)))
    .limit(1)
    .prepare("resolve_api_key");

const lookups = new WeakMap<Db, ReturnType<typeof buildLookup>>();

/**
 * Turns a presented `sk_…` secret into an actor, or null. The role comes from the live
 * membership, so removing or demoting a user takes effect on their keys at once.
 */
export async function resolveApiKey(deps: Deps, secret: string): Promise<Actor | null> {
  if (!secret.startsWith("sk_") || secret.length > 128) return null;
  let lookup = lookups.get(deps.db);
  if (!lookup) {
    lookup = buildLookup(deps.db);
    lookups.set(deps.db, lookup);
  }
  const [row] = await lookup.execute({ secretHash: hashApiKeySecret(secret) });
  if (!row) return null;
  const now = deps.clock();
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > LAST_USED_GRANULARITY_MS) {
    // Fire and forget: bookkeeping must never fail or slow the request it describes.
    deps.db
      .update(apiKeys)
      .set({ lastUsedAt: now })
      .where(eq(apiKeys.id, row.id))
      .catch((err: unknown) => deps.logger.warn({ err, keyId: row.id }, "last_used_at update failed"));
  }
  return {
    type: "api_key",
    id: row.id,
    userId: row.userId,
    organizationId: row.organizationId,
    role: row.role,
    permissions: new Set(row.permissions.filter(isPermission)),
  };
}
