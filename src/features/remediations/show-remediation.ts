import { requirePermission, type ServiceContext } from "../../context.ts";
import { findEnvironment } from "../environments/find-environment.ts";
import { getRemediation } from "./get-remediation.ts";
import type { Remediation } from "./schemas.ts";

/** `GET …/remediations/{remediationId}`: the run with its progress, for a person. */
export async function showRemediation(args: {
  ctx: ServiceContext;
  input: { environmentId: string; remediationId: string };
}): Promise<Remediation> {
  requirePermission(args.ctx, "remediations:read");
  await findEnvironment(args.ctx.deps.db, args.ctx, args.input.environmentId);
  return getRemediation({
    deps: args.ctx.deps,
    organizationId: args.ctx.actor.organizationId,
    ...args.input,
  });
}
