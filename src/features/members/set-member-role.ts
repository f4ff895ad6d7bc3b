import { type ServiceContext, withTransaction } from "../../context.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { memberships, type Role } from "../../platform/db/schema/users.ts";
import { notifyAuthChanged } from "../api-keys/index.ts";
import { assertNotLastOwner, lockMembership, membershipScope, requireOwner } from "./owners.ts";

/**
 * Changes a member's role. Their API keys act with the new role at once: every instance drops
 * its cached keys of the organisation when this commits (notifyAuthChanged), and the web UI
 * reads the role live on every page.
 */
export async function setMemberRole(args: {
  ctx: ServiceContext;
  input: { userId: string; role: Role };
}): Promise<void> {
  requireOwner(args.ctx);
  const { ctx, input } = args;
  const change = await withTransaction(ctx, async (tx) => {
    const locked = await lockMembership(tx, ctx, input.userId);
    if (locked.target.role === input.role) return undefined;
    if (input.role !== "owner") assertNotLastOwner(locked);
    await tx
      .update(memberships)
      .set({ role: input.role })
      .where(membershipScope(ctx.actor.organizationId, input.userId));
    await recordAudit(tx, ctx, {
      action: "member.role_changed",
      targetType: "user",
      targetId: input.userId,
      details: { from: locked.target.role, to: input.role },
    });
    return notifyAuthChanged(tx, ctx.deps, { organizationId: ctx.actor.organizationId });
  });
  await change?.delivered();
}
