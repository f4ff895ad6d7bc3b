import { eq, sql } from "drizzle-orm";
import { requireMember, type ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { type Db, perDatabase } from "../../platform/db/client.ts";
import { organizations } from "../../platform/db/schema/organizations.ts";
import { users } from "../../platform/db/schema/users.ts";
import type { Me } from "./schemas.ts";

/**
 * The caller's organisation and email, built once per database handle with placeholders on the
 * point-read connection (as the environment lookup): no SQL built per request, one prepared
 * round trip pipelined with the turn's other lookups. Never inside a transaction.
 */
const lookups = perDatabase((db: Db) =>
  db
    .select({ orgName: organizations.name, orgKind: organizations.kind, email: users.email })
    .from(organizations)
    .innerJoin(users, eq(users.id, sql.placeholder("userId")))
    .where(eq(organizations.id, sql.placeholder("organizationId")))
    .limit(1)
    .prepare("get_me"),
);

/** Who the caller is: needs no permission, any valid credential may ask. */
export async function getMe(args: { ctx: ServiceContext }): Promise<Me> {
  const { deps } = args.ctx;
  const actor = requireMember(args.ctx);
  const [row] = await lookups(deps.database.pointReads).execute({
    userId: actor.userId,
    organizationId: actor.organizationId,
  });
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
