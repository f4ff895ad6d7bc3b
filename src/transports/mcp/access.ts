import type { MemberActor } from "../../actor.ts";
import type { Permission } from "../../permissions.ts";

/** What a caller may do through `/mcp`. */
export type McpAccess = { read: boolean; write: boolean };

/**
 * API keys map onto the MCP server's two levels: `mcp_connections:manage` is write (and so
 * read), `mcp_connections:read` is read. The OAuth scopes `patchbay.mcp.write` and
 * `patchbay.mcp.read` (issue 5) will map onto the same two levels.
 */
export function mcpAccess(actor: MemberActor): McpAccess {
  const write = actor.permissions.has("mcp_connections:manage");
  return { read: write || actor.permissions.has("mcp_connections:read"), write };
}

/**
 * The actor the verbs see through `/mcp`. Read tools need read *or* write (issue 6), while the
 * read verbs check `mcp_connections:read` exactly, so write access also grants that one
 * permission here. Nothing else is added: owner/admin and tenancy stay the verbs' checks.
 */
export function mcpActor(actor: MemberActor): MemberActor {
  const access = mcpAccess(actor);
  if (!access.read || actor.permissions.has("mcp_connections:read")) return actor;
  const permissions = new Set<Permission>(actor.permissions);
  permissions.add("mcp_connections:read");
  return { ...actor, permissions };
}
