import { asc, eq } from "drizzle-orm";
import type { ServiceContext } from "../../context.ts";
import { memberships, type Role, users } from "../../platform/db/schema/users.ts";

export type Member = {
  userId: string;
  email: string;
  displayName: string | null;
  role: Role;
  joinedAt: string;
};

/** The organisation's members; every member may see who else belongs. */
export async function listMembers(args: { ctx: ServiceContext }): Promise<Member[]> {
  const rows = await args.ctx.deps.db
    .select({
      userId: users.id,
      email: users.email,
      displayName: users.displayName,
      role: memberships.role,
      joinedAt: memberships.createdAt,
    })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.organizationId, args.ctx.actor.organizationId))
    .orderBy(asc(memberships.createdAt), asc(users.id));
  return rows.map((r) => ({ ...r, joinedAt: r.joinedAt.toISOString() }));
}
