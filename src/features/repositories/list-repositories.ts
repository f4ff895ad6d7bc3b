import { eq } from "drizzle-orm";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { readPage } from "../../platform/db/pagination.ts";
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
  const { ctx, input } = args;
  const env = await findEnvironment(ctx.deps.db, ctx, input.environmentId);
  return readPage(ctx.deps.db, repositories, eq(repositories.environmentId, env.id), input, toRepository);
}
