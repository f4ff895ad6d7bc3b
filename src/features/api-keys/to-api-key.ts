import { isPermission } from "../../permissions.ts";
import type { apiKeys } from "../../platform/db/schema/api-keys.ts";
import type { ApiKey } from "./schemas.ts";

/** The public view of a key: never the secret or its hash. */
export const toApiKey = (row: typeof apiKeys.$inferSelect): ApiKey => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  userId: row.userId,
  permissions: row.permissions.filter(isPermission),
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  revokedAt: row.revokedAt?.toISOString() ?? null,
});
