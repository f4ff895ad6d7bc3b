import { and, eq, isNull } from "drizzle-orm";
import { type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { invitations } from "../../platform/db/schema/invitations.ts";
import { requireOwner } from "./owners.ts";

/** Withdraws an open invitation; its link stops working. Revoking a used or revoked one is a no-op. */
export async function revokeInvitation(args: {
  ctx: ServiceContext;
  input: { invitationId: string };
}): Promise<void> {
  requireOwner(args.ctx);
  const { ctx } = args;
  await withTransaction(ctx, async (tx) => {
    const scope = and(
      eq(invitations.id, args.input.invitationId),
      eq(invitations.organizationId, ctx.actor.organizationId),
    );
    const [row] = await tx.select({ id: invitations.id }).from(invitations).where(scope).limit(1);
    if (!row) throw new AppError("not_found", `Invitation ${args.input.invitationId} was not found.`);
    const revoked = await tx
      .update(invitations)
      .set({ revokedAt: ctx.deps.clock() })
      .where(and(scope, isNull(invitations.revokedAt), isNull(invitations.acceptedAt)))
      .returning({ id: invitations.id });
    if (revoked.length === 0) return;
    await recordAudit(tx, ctx, {
      action: "member.invitation_revoked",
      targetType: "invitation",
      targetId: row.id,
    });
  });
}
