import { and, eq } from "drizzle-orm";
import type { MemberActor } from "../../actor.ts";
import { requireMember, type ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { memberships } from "../../platform/db/schema/users.ts";

/**
 * Who belongs to an organisation, and with which role, is the owners' decision alone: an admin
 * who could invite or promote could make themselves an owner.
 */
export function requireOwner(ctx: ServiceContext): MemberActor {
  const member = requireMember(ctx);
  if (member.role !== "owner") {
    throw new AppError("forbidden", "Only an owner of this organisation may manage its members.", {
      role: member.role,
    });
  }
  return member;
}

type MembershipRow = typeof memberships.$inferSelect;

/**
 * Locks every membership row of the caller's organisation and returns the target's. Locking
 * them all (not just the target's) serialises concurrent role changes, so two owners demoting
 * each other at once cannot leave the organisation with none.
 */
export async function lockMembership(
  tx: Db,
  ctx: ServiceContext,
  userId: string,
): Promise<{
  target: MembershipRow;
  ownerCount: number;
}> {
  const rows = await tx
    .select()
    .from(memberships)
    .where(eq(memberships.organizationId, ctx.actor.organizationId))
    .orderBy(memberships.userId)
    .for("update");
  const target = rows.find((r) => r.userId === userId);
  if (!target) throw new AppError("not_found", `User ${userId} is not a member of this organisation.`);
  return { target, ownerCount: rows.filter((r) => r.role === "owner").length };
}

/** An organisation always keeps one owner: nobody else could manage its members. */
export function assertNotLastOwner(locked: { target: MembershipRow; ownerCount: number }): void {
  if (locked.target.role === "owner" && locked.ownerCount <= 1) {
    throw new AppError(
      "last_owner",
      "This is the organisation's only owner. Make another member an owner first.",
    );
  }
}

export const membershipScope = (organizationId: string, userId: string) =>
  and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId));
