/**
 * Every permission an API key (or, later, an OAuth scope) can carry. `telemetry:read` opens
 * services, logs, traces and problems; `problems:manage` changes a problem's status. On `/mcp`,
 * `audit_log:read` opens the organisation's audit trail (owners and admins only, whatever the key
 * carries). `mcp_connections:read` opens the read tools and `mcp_connections:manage` all of them
 * (src/transports/mcp/routes.ts; the OAuth scopes patchbay.mcp.read/.write map onto the same).
 * `webhooks:read`/`webhooks:manage` open the organisation's webhook endpoints and delivery logs
 * (owners and admins only, like API keys).
 */
export const permissions = [
  "environments:read",
  "environments:manage",
  "api_keys:read",
  "api_keys:manage",
  "mcp_connections:read",
  "mcp_connections:manage",
  "tasks:read",
  "tasks:manage",
  "publishable_keys:read",
  "publishable_keys:manage",
  "telemetry:read",
  "problems:manage",
  "repositories:read",
  "repositories:manage",
  "remediations:read",
  "remediations:manage",
  "webhooks:read",
  "webhooks:manage",
  "audit_log:read",
] as const;

export type Permission = (typeof permissions)[number];

/**
 * The UI's key dialog must not offer these (spec 5.2): owners and admins grant them through
 * the key API only.
 */
export const apiOnlyPermissions: readonly Permission[] = ["mcp_connections:read", "mcp_connections:manage"];

export const isPermission = (value: string): value is Permission =>
  (permissions as readonly string[]).includes(value);
