import { eq } from "drizzle-orm";
import { requireMember, type ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { organizations } from "../../platform/db/schema/organizations.ts";
import { users } from "../../platform/db/schema/users.ts";
import type { Me } from "./schemas.ts";

/** Who the caller is: needs no permission, any valid credential may ask. */
export async function getMe(args: { ctx: ServiceContext }): Promise<Me> {
  const { deps } = args.ctx;
  const actor = requireMember(args.ctx);
  const [row] = await deps.db
    .select({ orgName: organizations.name, orgKind: organizations.kind, email: users.email })
    .from(organizations)
    .innerJoin(users, eq(users.id, actor.userId))
    .where(eq(organizations.id, actor.organizationId))
    .limit(1);
  if (!row) throw new AppError("unauthorized", "The credential's organisation or user no longer exists.");
  return {
    actor: {
      type: actor.type,
      id: actor.id,
      ...(actor.oauth ? { clientId: actor.oauth.clientId, scopes: [...actor.oauth.scopes] } : {}),
    },
    user: { id: actor.userId, email: row.email },
    organization: { id: actor.organizationId, name: row.orgName, kind: row.orgKind },
    role: actor.role,
    permissions: [...actor.permissions].sort(),
  };
}
