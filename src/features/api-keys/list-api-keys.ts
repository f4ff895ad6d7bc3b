import { requireOwnerOrAdmin, type ServiceContext } from "../../context.ts";
import { readPage } from "../../platform/db/pagination.ts";
import { apiKeys } from "../../platform/db/schema/api-keys.ts";
import { type ApiKey, toApiKey } from "./schemas.ts";

export async function listApiKeys(args: {
  ctx: ServiceContext;
  input: { pageSize: number; cursor?: string | undefined };
}): Promise<{ items: ApiKey[]; nextCursor: string | null }> {
  requireOwnerOrAdmin(args.ctx, "api_keys:read");
  const { ctx, input } = args;
  return readPage(ctx.deps.db, apiKeys, { organizationId: ctx.actor.organizationId }, input, toApiKey);
}
