import { requirePermission, type ServiceContext } from "../../context.ts";
import { readPage } from "../../platform/db/pagination.ts";
import { publishableKeys } from "../../platform/db/schema/publishable-keys.ts";
import { findEnvironment } from "../environments/index.ts";
import { type PublishableKey, toPublishableKey } from "./schemas.ts";

/** The environment's keys, revoked ones included (with `revokedAt`), oldest first. Never the keys. */
export async function listPublishableKeys(args: {
  ctx: ServiceContext;
  input: { environmentId: string; pageSize: number; cursor?: string | undefined };
}): Promise<{ items: PublishableKey[]; nextCursor: string | null }> {
  requirePermission(args.ctx, "publishable_keys:read");
  const { ctx, input } = args;
  const env = await findEnvironment(ctx.deps.db, ctx, input.environmentId);
  return readPage(ctx.deps.db, publishableKeys, { environmentId: env.id }, input, toPublishableKey);
}
