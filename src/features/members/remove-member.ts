import { and, eq, isNull } from "drizzle-orm";
import { type ServiceContext, withTransaction } from "../../context.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { apiKeys } from "../../platform/db/schema/api-keys.ts";
import { memberships } from "../../platform/db/schema/users.ts";
import { notifyAuthChanged } from "../api-keys/index.ts";
import { revokeMemberGrants } from "../oauth/index.ts";
import { assertNotLastOwner, lockMembership, membershipScope, requireOwner } from "./owners.ts";

/**
 * Removes a member. Their API keys and OAuth grants for this organisation are revoked too: both
 * resolve through the membership, so without this a later re-invitation would bring them back.
 */
export async function removeMember(args: { ctx: ServiceContext; input: { userId: string } }): Promise<void> {
  requireOwner(args.ctx);
  const { ctx, input } = args;
  const organizationId = ctx.actor.organizationId;
  const change = await withTransaction(ctx, async (tx) => {
    const locked = await lockMembership(tx, ctx, input.userId);
    assertNotLastOwner(locked);
    await tx.delete(memberships).where(membershipScope(organizationId, input.userId));
    const revoked = await tx
      .update(apiKeys)
      .set({ revokedAt: ctx.deps.clock() })
      .where(
        and(
          eq(apiKeys.organizationId, organizationId),
          eq(apiKeys.userId, input.userId),
          isNull(apiKeys.revokedAt),
        ),
      )
      .returning({ id: apiKeys.id });
    const oauthGrantsRevoked = await revokeMemberGrants(tx, { organizationId, userId: input.userId });
    await recordAudit(tx, ctx, {
      action: "member.removed",
      targetType: "user",
      targetId: input.userId,
      details: { role: locked.target.role, apiKeysRevoked: revoked.length, oauthGrantsRevoked },
    });
    return notifyAuthChanged(tx, ctx.deps, { organizationId });
  });
  await change.delivered();
}
