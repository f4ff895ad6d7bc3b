import { requirePermission, type ServiceContext } from "../../context.ts";
import { readPage } from "../../platform/db/pagination.ts";
import { environments } from "../../platform/db/schema/environments.ts";
import { type Environment, toEnvironment } from "./schemas.ts";

export async function listEnvironments(args: {
  ctx: ServiceContext;
  input: { pageSize: number; cursor?: string | undefined };
}): Promise<{ items: Environment[]; nextCursor: string | null }> {
  requirePermission(args.ctx, "environments:read");
  const { ctx, input } = args;
  return readPage(
    ctx.deps.db,
    environments,
    { organizationId: ctx.actor.organizationId },
    input,
    toEnvironment,
  );
}
