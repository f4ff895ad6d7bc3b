import { requirePermission, type ServiceContext } from "../../context.ts";
import { findRepository } from "./find-repository.ts";
import type { Repository } from "./schemas.ts";
import { toRepository } from "./to-repository.ts";

export async function getRepository(args: {
  ctx: ServiceContext;
  input: { environmentId: string; repositoryId: string };
}): Promise<Repository> {
  requirePermission(args.ctx, "repositories:read");
  return toRepository(await findRepository(args.ctx.deps.db, args.ctx, args.input));
}
