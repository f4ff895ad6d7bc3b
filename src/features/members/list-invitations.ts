import { and, asc, eq, gt, isNull } from "drizzle-orm";
import type { ServiceContext } from "../../context.ts";
import { invitations } from "../../platform/db/schema/invitations.ts";
import type { Role } from "../../platform/db/schema/users.ts";
import { requireOwner } from "./owners.ts";

export type Invitation = {
  id: string;
  email: string;
  role: Role;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
};

export const toInvitation = (row: typeof invitations.$inferSelect): Invitation => ({
  id: row.id,
  email: row.email,
  role: row.role,
  invitedBy: row.invitedBy,
  createdAt: row.createdAt.toISOString(),
  expiresAt: row.expiresAt.toISOString(),
});

/** Invitations still open: neither accepted, revoked nor expired. */
export async function listInvitations(args: { ctx: ServiceContext }): Promise<Invitation[]> {
  requireOwner(args.ctx);
  const rows = await args.ctx.deps.db
    .select()
    .from(invitations)
    .where(
      and(
        eq(invitations.organizationId, args.ctx.actor.organizationId),
        isNull(invitations.acceptedAt),
        isNull(invitations.revokedAt),
        gt(invitations.expiresAt, args.ctx.deps.clock()),
      ),
    )
    .orderBy(asc(invitations.createdAt), asc(invitations.id));
  return rows.map(toInvitation);
}
