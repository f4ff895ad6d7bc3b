import { and, asc, eq } from "drizzle-orm";
import { requireOwnerOrAdmin, requirePermission, type ServiceContext } from "../../context.ts";
import { afterCursor, decodeCursor, toPage } from "../../platform/db/pagination.ts";
import { apiKeys } from "../../platform/db/schema/api-keys.ts";
import type { ApiKey } from "./schemas.ts";
import { toApiKey } from "./to-api-key.ts";

export async function listApiKeys(args: {
  ctx: ServiceContext;
  input: { pageSize: number; cursor?: string | undefined };
}): Promise<{ items: ApiKey[]; nextCursor: string | null }> {
  requirePermission(args.ctx, "api_keys:read");
  requireOwnerOrAdmin(args.ctx);
  const rows = await args.ctx.deps.db
    .select()
    .from(apiKeys)
    .where(
      and(
        eq(apiKeys.organizationId, args.ctx.actor.organizationId),
        afterCursor(apiKeys.createdAt, apiKeys.id, decodeCursor(args.input.cursor)),
      ),
    )
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id))
    .limit(args.input.pageSize + 1);
  return toPage(rows, args.input.pageSize, toApiKey);
}
