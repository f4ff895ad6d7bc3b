import type { ResourceName } from "./oauth-resources.ts";
import type { Permission } from "./permissions.ts";
import type { Role } from "./platform/db/schema/users.ts";

/**
 * Who is calling: an API key (`id` is the key's id), a person signed in to the web UI (`id` is
 * the web session's id, its role read live from the membership) or an OAuth access token (`id`
 * is its grant's binding, `oag_…`; the role read live too). Wallet principals join this union
 * later. Audit rows name the type and id.
 */
export type Actor = {
  type: "api_key" | "web_session" | "oauth_token";
  id: string;
  userId: string;
  organizationId: string;
  role: Role;
  permissions: ReadonlySet<Permission>;
  /** OAuth tokens only: the resource (audience) they were issued for and their scopes. */
  oauth?: { resource: ResourceName; scopes: readonly string[]; clientId: string } | undefined;
};
