import type { publishableKeys } from "../../platform/db/schema/publishable-keys.ts";
import type { PublishableKey } from "./schemas.ts";

/** The public view of a key: never the key or its hash. */
export const toPublishableKey = (row: typeof publishableKeys.$inferSelect): PublishableKey => ({
  id: row.id,
  environmentId: row.environmentId,
  name: row.name,
  prefix: row.prefix,
  createdBy: row.createdBy,
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  revokedAt: row.revokedAt?.toISOString() ?? null,
});
