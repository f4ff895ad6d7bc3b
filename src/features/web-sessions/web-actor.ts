import { and, asc, eq } from "drizzle-orm";
import type { MemberActor } from "../../actor.ts";
import { type Permission, permissions } from "../../permissions.ts";
import type { Db } from "../../platform/db/client.ts";
import { organizations } from "../../platform/db/schema/organizations.ts";
import { memberships, type Role } from "../../platform/db/schema/users.ts";
import type { WebUser } from "./resolve-web-session.ts";

const readPermissions = permissions.filter((p) => p.endsWith(":read"));

/**
 * A signed-in person acts with their role's permissions. Owners and admins hold every one, so
 * the UI reaches the same verbs the REST API does (whose owner/admin checks still apply);
 * members hold the read permissions. The verbs' role checks stay the real gate.
 */
export function rolePermissions(role: Role): ReadonlySet<Permission> {
  return new Set(role === "member" ? readPermissions : permissions);
}

export type WebOrganization = { id: string; name: string; role: Role };

/**
 * The actor for a signed-in user inside one organisation, with the role read live from the
 * membership (a demotion or removal applies to the next page), or null when the user is not a
 * member — which the UI shows as "not found", exactly like another organisation's resource.
 */
export async function resolveWebActor(
  db: Db,
  user: WebUser,
  organizationId: string,
): Promise<{ actor: MemberActor; organization: WebOrganization } | null> {
  const [row] = await db
    .select({ role: memberships.role, name: organizations.name })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, user.userId)))
    .limit(1);
  if (!row) return null;
  const actor: MemberActor = Object.freeze({
    type: "web_session",
    id: user.sessionId,
    userId: user.userId,
    organizationId,
    role: row.role,
    permissions: rolePermissions(row.role),
  });
  return { actor, organization: { id: organizationId, name: row.name, role: row.role } };
}

/** Every organisation the user belongs to, oldest membership first (the default landing). */
export async function listMyOrganizations(args: {
  db: Db;
  input: { userId: string };
}): Promise<WebOrganization[]> {
  return args.db
    .select({ id: organizations.id, name: organizations.name, role: memberships.role })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(eq(memberships.userId, args.input.userId))
    .orderBy(asc(memberships.createdAt), asc(organizations.id));
}
