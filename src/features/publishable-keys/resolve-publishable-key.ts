import { and, eq, isNull, sql } from "drizzle-orm";
import { type Db, perDatabase } from "../../platform/db/client.ts";
import { publishableKeys } from "../../platform/db/schema/publishable-keys.ts";
import type { Logger } from "../../platform/logging/logger.ts";
import { hashPublishableKey } from "./key-value.ts";

/** Who sends telemetry: the environment a publishable key belongs to. */
export type IngestPrincipal = { keyId: string; organizationId: string; environmentId: string };

const LAST_USED_GRANULARITY_MS = 60_000;

const buildLookup = (db: Db) =>
  db
    .select({
      id: publishableKeys.id,
      organizationId: publishableKeys.organizationId,
      environmentId: publishableKeys.environmentId,
      lastUsedAt: publishableKeys.lastUsedAt,
    })
    .from(publishableKeys)
    .where(and(eq(publishableKeys.keyHash, sql.placeholder("keyHash")), isNull(publishableKeys.revokedAt)))
    .limit(1)
    .prepare("resolve_publishable_key");

const lookups = perDatabase(buildLookup);

/**
 * Turns a presented `pk_…` key into its environment, or null (unknown, malformed or revoked).
 * Deliberately uncached: exporters send one request per batch (seconds apart), so a primary-key
 * probe per request is cheap, and revocation takes effect on the very next request everywhere.
 */
export async function resolvePublishableKey(
  deps: { db: Db; clock: () => Date; logger: Logger },
  key: string,
): Promise<IngestPrincipal | null> {
  if (!/^pk_[0-9a-z]{20,80}$/.test(key)) return null;
  const lookup = lookups(deps.db);
  const [row] = await lookup.execute({ keyHash: hashPublishableKey(key) });
  if (!row) return null;
  const now = deps.clock();
  if (row.lastUsedAt === null || now.getTime() - row.lastUsedAt.getTime() > LAST_USED_GRANULARITY_MS) {
    // Fire and forget: bookkeeping must never fail or slow the ingest it describes.
    deps.db
      .update(publishableKeys)
      .set({ lastUsedAt: now })
      .where(eq(publishableKeys.id, row.id))
      .catch((err: unknown) =>
        deps.logger.warn({ err, keyId: row.id }, "publishable key last_used_at failed"),
      );
  }
  return { keyId: row.id, organizationId: row.organizationId, environmentId: row.environmentId };
}
