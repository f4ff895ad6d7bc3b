import { createHash } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import { type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { newId, randomToken } from "../../ids.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { invitations } from "../../platform/db/schema/invitations.ts";
import { memberships, type Role, users } from "../../platform/db/schema/users.ts";
import { normalizeEmail } from "../web-sessions/index.ts";
import { type Invitation, toInvitation } from "./list-invitations.ts";
import { requireOwner } from "./owners.ts";

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** An invitation link works for seven days, once. */
const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** `pbi_` + 200 random bits; only the SHA-256 is stored. */
function newInvitationToken(): { token: string; hash: string } {
  const token = `pbi_${randomToken(25)}`;
  return { token, hash: hashInvitationToken(token) };
}

export const hashInvitationToken = (token: string): string =>
  createHash("sha256").update(token).digest("hex");

/**
 * Invites an email address to the organisation with a role. Returns the single-use token once:
 * the caller hands the link to the invitee (patchbay sends no mail). A newer invitation for
 * the same address replaces any open one, so only the latest link works.
 */
export async function inviteMember(args: {
  ctx: ServiceContext;
  input: { email: string; role: Role };
}): Promise<{ invitation: Invitation; token: string }> {
  const inviter = requireOwner(args.ctx);
  const { ctx } = args;
  const email = normalizeEmail(args.input.email);
  if (email.length > 254 || !emailPattern.test(email)) {
    throw new AppError("invalid_request", "Enter an email address such as name@example.com.", {
      errors: [{ path: "email", message: "must be an email address" }],
    });
  }
  const organizationId = ctx.actor.organizationId;
  const now = ctx.deps.clock();
  const { token, hash } = newInvitationToken();
  return withTransaction(ctx, async (tx) => {
    const [member] = await tx
      .select({ userId: memberships.userId })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.organizationId, organizationId), eq(users.email, email)))
      .limit(1);
    if (member) throw new AppError("already_member", `${email} is already a member of this organisation.`);
    await tx
      .update(invitations)
      .set({ revokedAt: now })
      .where(
        and(
          eq(invitations.organizationId, organizationId),
          eq(invitations.email, email),
          isNull(invitations.acceptedAt),
          isNull(invitations.revokedAt),
        ),
      );
    const [row] = await tx
      .insert(invitations)
      .values({
        id: newId("inv"),
        organizationId,
        email,
        role: args.input.role,
        tokenHash: hash,
        invitedBy: inviter.userId,
        createdAt: now,
        expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
      })
      .returning();
    if (!row) throw new Error("insert returned no row");
    await recordAudit(tx, ctx, {
      action: "member.invited",
      targetType: "invitation",
      targetId: row.id,
      details: { email, role: row.role, expiresAt: row.expiresAt.toISOString() },
    });
    return { invitation: toInvitation(row), token };
  });
}
