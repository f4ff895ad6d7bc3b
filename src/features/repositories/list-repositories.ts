import { and, asc, eq } from "drizzle-orm";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { afterCursor, decodeCursor, toPage } from "../../platform/db/pagination.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import { findEnvironment } from "../environments/find-environment.ts";
import type { Repository } from "./schemas.ts";
import { toRepository } from "./to-repository.ts";

/** The environment's registered repositories, oldest first. */
export async function listRepositories(args: {
  ctx: ServiceContext;
  input: { environmentId: string; pageSize: number; cursor?: string | undefined };
}): Promise<{ items: Repository[]; nextCursor: string | null }> {
  requirePermission(args.ctx, "repositories:read");
  const db = args.ctx.deps.db;
  const env = await findEnvironment(db, args.ctx, args.input.environmentId);
  const rows = await db
    .select()
    .from(repositories)
    .where(
      and(
        eq(repositories.environmentId, env.id),
        afterCursor(repositories.createdAt, repositories.id, decodeCursor(args.input.cursor)),
      ),
    )
    .orderBy(asc(repositories.createdAt), asc(repositories.id))
    .limit(args.input.pageSize + 1);
  return toPage(rows, args.input.pageSize, toRepository);
}
