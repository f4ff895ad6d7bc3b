import { and, asc, eq } from "drizzle-orm";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { afterCursor, decodeCursor, toPage } from "../../platform/db/pagination.ts";
import { environments } from "../../platform/db/schema/environments.ts";
import type { Environment } from "./schemas.ts";
import { toEnvironment } from "./to-environment.ts";

export async function listEnvironments(args: {
  ctx: ServiceContext;
  input: { pageSize: number; cursor?: string | undefined };
}): Promise<{ items: Environment[]; nextCursor: string | null }> {
  requirePermission(args.ctx, "environments:read");
  const cursor = decodeCursor(args.input.cursor);
  const rows = await args.ctx.deps.db
    .select()
    .from(environments)
    .where(
      and(
        eq(environments.organizationId, args.ctx.actor.organizationId),
        afterCursor(environments.createdAt, environments.id, cursor),
      ),
    )
    .orderBy(asc(environments.createdAt), asc(environments.id))
    .limit(args.input.pageSize + 1);
  return toPage(rows, args.input.pageSize, toEnvironment);
}
