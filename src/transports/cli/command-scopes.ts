import type { Permission } from "../../permissions.ts";

/**
 * The REST permissions each of the CLI's API command groups uses, read and manage alike: the one
 * list `patchbay login` asks for (their union plus `offline_access`), so a plain login runs every
 * command its person's role allows. A group added without its entry here fails cli.test.ts, which
 * walks the command tree. Scopes never widen a role: an admin's login still cannot do what only
 * an owner may.
 */
export const commandScopes = {
  whoami: [],
  environment: ["environments:read"],
  "environment mcp": ["mcp_connections:read", "mcp_connections:manage"],
  "environment task": ["tasks:read", "tasks:manage"],
  "environment repository": ["repositories:read", "repositories:manage"],
  audit: ["audit_log:read"],
  webhook: ["webhooks:read", "webhooks:manage"],
} as const satisfies Record<string, readonly Permission[]>;

/** What `patchbay login` asks for on `/api/v1`. */
export const loginScopes: readonly string[] = [
  ...new Set<string>(Object.values(commandScopes).flat()),
  "offline_access",
];
