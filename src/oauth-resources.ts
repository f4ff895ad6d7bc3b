import { type Permission, permissions } from "./permissions.ts";

/**
 * The two protected resources (RFC 8707 audiences) and the scopes each accepts. A token is
 * issued for exactly one of them and refused by the other.
 */
export type ResourceName = "api" | "mcp";

export const API_PATH = "/api/v1";
export const MCP_PATH = "/mcp";

/** The resource indicator (and token audience) of each resource: the public URL it answers on. */
export function resourceUrl(baseUrl: string, name: ResourceName): string {
  return `${baseUrl}${name === "api" ? API_PATH : MCP_PATH}`;
}

/** `/mcp` has two levels: read tools, and every tool (write includes read). */
export const mcpScopes = ["patchbay.mcp.read", "patchbay.mcp.write"] as const;
export type McpScope = (typeof mcpScopes)[number];

/** REST scopes mirror the API-key permissions one to one (DESIGN §4). */
export const apiScopes: readonly Permission[] = permissions;

export function scopesOf(name: ResourceName): readonly string[] {
  return name === "api" ? apiScopes : mcpScopes;
}

/** Which resource a resource indicator names, or undefined for anything else. */
export function resourceNamed(baseUrl: string, indicator: string): ResourceName | undefined {
  if (indicator === resourceUrl(baseUrl, "api")) return "api";
  if (indicator === resourceUrl(baseUrl, "mcp")) return "mcp";
  return undefined;
}

/**
 * What a token's scopes let its holder do, as the permissions the verbs check. On `/mcp` the
 * write scope carries both connection permissions and the read scope the read one, so the
 * server's read/write levels (src/transports/mcp/routes.ts) work for tokens as they do for keys;
 * both read the call approvals of tasks (list_task_call_approvals), which only a person decides.
 */
export function permissionsForScopes(name: ResourceName, scopes: Iterable<string>): Set<Permission> {
  const granted = new Set<Permission>();
  for (const scope of scopes) {
    if (name === "api") {
      if ((apiScopes as readonly string[]).includes(scope)) granted.add(scope as Permission);
    } else if (scope === "patchbay.mcp.write") {
      granted.add("mcp_connections:manage");
      granted.add("mcp_connections:read");
      granted.add("tasks:read");
    } else if (scope === "patchbay.mcp.read") {
      granted.add("mcp_connections:read");
      granted.add("tasks:read");
    }
  }
  return granted;
}

/** The scope that grants a permission on a resource, for `insufficient_scope` challenges. */
export function scopeForPermission(name: ResourceName, permission: Permission): string | undefined {
  if (name === "api") return permission;
  if (permission === "mcp_connections:read") return "patchbay.mcp.read";
  if (permission === "mcp_connections:manage") return "patchbay.mcp.write";
  return undefined;
}

/** What the consent page says each scope allows. */
export const scopeDescriptions: Record<string, string> = {
  "patchbay.mcp.read":
    "Read MCP connections, and the task calls waiting for approval, through the MCP server",
  "patchbay.mcp.write": "Create, change and delete MCP connections through the MCP server",
  "environments:read": "Read environments",
  "environments:manage": "Create and rename environments",
  "api_keys:read": "List API keys",
  "api_keys:manage": "Create and revoke API keys",
  "mcp_connections:read": "Read MCP connections",
  "mcp_connections:manage": "Create, change and delete MCP connections",
  "tasks:read": "Read tasks",
  "tasks:manage": "Start and cancel tasks",
  "publishable_keys:read": "List publishable telemetry keys",
  "publishable_keys:manage": "Create and revoke publishable telemetry keys",
  "telemetry:read": "Read telemetry",
  "webhooks:read": "Read webhook endpoints and their delivery logs",
  "webhooks:manage": "Create, change and delete webhook endpoints, rotate their secrets, redeliver",
  "audit_log:read": "Read the organisation's audit trail (owners and admins)",
  offline_access: "Stay signed in (a refresh token)",
};
