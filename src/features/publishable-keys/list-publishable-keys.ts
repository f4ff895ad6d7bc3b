import { and, asc, eq } from "drizzle-orm";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { afterCursor, decodeCursor, toPage } from "../../platform/db/pagination.ts";
import { publishableKeys } from "../../platform/db/schema/publishable-keys.ts";
import { findEnvironment } from "../environments/find-environment.ts";
import type { PublishableKey } from "./schemas.ts";
import { toPublishableKey } from "./to-publishable-key.ts";

/** The environment's keys, revoked ones included (with `revokedAt`), oldest first. Never the keys. */
export async function listPublishableKeys(args: {
  ctx: ServiceContext;
  input: { environmentId: string; pageSize: number; cursor?: string | undefined };
}): Promise<{ items: PublishableKey[]; nextCursor: string | null }> {
  requirePermission(args.ctx, "publishable_keys:read");
  const db = args.ctx.deps.db;
  const env = await findEnvironment(db, args.ctx, args.input.environmentId);
  const rows = await db
    .select()
    .from(publishableKeys)
    .where(
      and(
        eq(publishableKeys.environmentId, env.id),
        afterCursor(publishableKeys.createdAt, publishableKeys.id, decodeCursor(args.input.cursor)),
      ),
    )
    .orderBy(asc(publishableKeys.createdAt), asc(publishableKeys.id))
    .limit(args.input.pageSize + 1);
  return toPage(rows, args.input.pageSize, toPublishableKey);
}
