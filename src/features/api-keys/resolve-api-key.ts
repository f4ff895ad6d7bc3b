import { and, eq, isNull, sql } from "drizzle-orm";
import type { MemberActor } from "../../actor.ts";
import type { Deps } from "../../deps.ts";
import { isPermission } from "../../permissions.ts";
import { type Db, perDatabase } from "../../platform/db/client.ts";
import { apiKeys } from "../../platform/db/schema/api-keys.ts";
import { memberships } from "../../platform/db/schema/users.ts";
import { hashApiKeySecret } from "./key-secret.ts";

/** Refresh `last_used_at` at most this often: a write per request would halve read throughput. */
const LAST_USED_GRANULARITY_MS = 60_000;

/**
 * Built once per database handle, on its point-read connection (`DatabaseHandle.pointReads`): no
 * SQL building per request, planned once per connection.
 */
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

const lookups = perDatabase(buildLookup);

/**
 * Turns a presented `sk_…` secret into an actor, or null. The role comes from the live
 * membership, so removing or demoting a user takes effect on their keys at once: a cached
 * answer is dropped by the change's notification (see auth-cache.ts), never merely aged out.
 */
export async function resolveApiKey(deps: Deps, secret: string): Promise<MemberActor | null> {
  if (!secret.startsWith("sk_") || secret.length > 128) return null;
  return cachedApiKey(deps, secret) ?? readApiKey(deps, hashApiKeySecret(secret));
}

/**
 * `resolveApiKey`'s answer when the auth cache holds it, synchronously (no promise for the
 * common case of a known key); undefined when it has to be read.
 */
export function cachedApiKey(deps: Deps, secret: string): MemberActor | undefined {
  const cache = deps.authCache;
  if (!cache || !secret.startsWith("sk_") || secret.length > 128) return undefined;
  const cached = cache.get(hashApiKeySecret(secret));
  if (!cached) return undefined;
  cached.lastUsedAt = touch(deps, cached.actor.id, cached.lastUsedAt);
  return cached.actor;
}

async function readApiKey(deps: Deps, secretHash: string): Promise<MemberActor | null> {
  const cache = deps.authCache;
  const ticket = cache?.ticket() ?? 0;
  const reads = deps.database.pointReads;
  const lookup = lookups(reads);
  const [row] = await lookup.execute({ secretHash });
  // Unknown, revoked or orphaned keys are not cached: misses cost a query, as they always did.
  if (!row) return null;
  const actor: MemberActor = Object.freeze({
    type: "api_key",
    id: row.id,
    userId: row.userId,
    organizationId: row.organizationId,
    role: row.role,
    permissions: new Set(row.permissions.filter(isPermission)),
  });
  const lastUsedAt = touch(deps, row.id, row.lastUsedAt?.getTime() ?? null);
  cache?.set(secretHash, { actor, lastUsedAt }, ticket);
  return actor;
}

/** Writes `last_used_at` when the stored one is stale; returns what is stored now (ms). */
function touch(deps: Deps, keyId: string, lastUsedAt: number | null): number | null {
  const now = deps.clock();
  if (lastUsedAt !== null && now.getTime() - lastUsedAt <= LAST_USED_GRANULARITY_MS) return lastUsedAt;
  // Fire and forget: bookkeeping must never fail or slow the request it describes.
  deps.db
    .update(apiKeys)
    .set({ lastUsedAt: now })
    .where(eq(apiKeys.id, keyId))
    .catch((err: unknown) => deps.logger.warn({ err, keyId }, "last_used_at update failed"));
  return now.getTime();
}
