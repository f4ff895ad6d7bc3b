import { requirePermission, type ServiceContext } from "../../context.ts";
import { findEnvironment } from "../environments/find-environment.ts";

/**
 * The REST side of the query verbs (which take an environment id and trust it): the caller needs
 * `telemetry:read`, and the environment must be its organisation's — another organisation's is
 * 404, like a missing one. Any member may read; changing a problem is for owners and admins.
 */
export async function authorizeTelemetryRead(ctx: ServiceContext, environmentId: string): Promise<void> {
  requirePermission(ctx, "telemetry:read");
  await findEnvironment(ctx.deps.db, ctx, environmentId);
}
