import { requirePermission, type ServiceContext } from "../../context.ts";
import { findEnvironment } from "./find-environment.ts";
import { type Environment, toEnvironment } from "./schemas.ts";

export async function getEnvironment(args: {
  ctx: ServiceContext;
  input: { environmentId: string };
}): Promise<Environment> {
  requirePermission(args.ctx, "environments:read");
  return toEnvironment(await findEnvironment(args.ctx.deps.db, args.ctx, args.input.environmentId));
}
