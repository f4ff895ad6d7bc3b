import type { MemberActor } from "../../actor.ts";
import { requireOwnerOrAdmin, requirePermission, type ServiceContext } from "../../context.ts";

/** Spec 5.2/5.4: the permission for the operation, and owner or admin of the organisation. */
export function authorizeConnections(ctx: ServiceContext, access: "read" | "manage"): MemberActor {
  requirePermission(ctx, access === "read" ? "mcp_connections:read" : "mcp_connections:manage");
  return requireOwnerOrAdmin(ctx);
}
