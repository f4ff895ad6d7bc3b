import { and, eq, isNull } from "drizzle-orm";
import { withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { recordAuditAs } from "../../platform/audit/record-audit.ts";
import { invitations } from "../../platform/db/schema/invitations.ts";
import { memberships, users } from "../../platform/db/schema/users.ts";
import {
  assertPasswordAcceptable,
  claimSignInAttempt,
  hashPassword,
  releaseSignInAttempt,
  type StartedWebSession,
  startWebSession,
  verifyPassword,
} from "../web-sessions/index.ts";
import { findInvitation } from "./find-invitation.ts";

const wrongPassword = () =>
  new AppError(
    "unauthorized",
    "That is not the password of this account. Enter your current patchbay password.",
    {
      errors: [{ path: "password", message: "is not this account's password" }],
    },
  );

/**
 * Accepts an invitation: the invitee either chooses their first password or, if they already
 * have an account, proves it with their current one. Then they join with the invited role and
 * are signed in. The link works once: the invitation row is locked and marked used in the same
 * transaction that adds the membership.
 */
export async function acceptInvitation(args: {
  deps: Pick<Deps, "db" | "clock" | "logger">;
  input: { token: string; password: string; clientAddress: string; replacing?: string | undefined };
}): Promise<StartedWebSession & { userId: string; organizationId: string }> {
  const { deps, input } = args;
  const invitation = await findInvitation({ db: deps.db, now: deps.clock(), input });
  const [existing] = await deps.db
    .select({ id: users.id, passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.email, invitation.email))
    .limit(1);
  // Slow work (argon2) before the transaction: no row lock is held across it.
  let newHash: string | undefined;
  if (existing?.passwordHash) {
    const keys = { email: invitation.email, address: input.clientAddress };
    await claimSignInAttempt(deps.db, keys, deps.clock());
    if (!(await verifyPassword(existing.passwordHash, input.password))) throw wrongPassword();
    await releaseSignInAttempt(deps.db, keys, deps.clock());
  } else {
    assertPasswordAcceptable(input.password);
    newHash = await hashPassword(input.password);
  }

  const now = deps.clock();
  const userId = await withTransaction(deps.db, async (tx) => {
    const [locked] = await tx
      .select({ id: invitations.id })
      .from(invitations)
      .where(
        and(eq(invitations.id, invitation.id), isNull(invitations.acceptedAt), isNull(invitations.revokedAt)),
      )
      .for("update");
    if (!locked || invitation.expiresAt <= now) {
      throw new AppError("invitation_invalid", "This invitation link has just been used or withdrawn.");
    }
    let id = existing?.id;
    if (!id) {
      const [created] = await tx
        .insert(users)
        .values({ id: newId("usr"), email: invitation.email, passwordHash: newHash })
        .onConflictDoNothing({ target: users.email })
        .returning({ id: users.id });
      id = created?.id;
    } else if (newHash) {
      const set = await tx
        .update(users)
        .set({ passwordHash: newHash })
        .where(and(eq(users.id, id), isNull(users.passwordHash)))
        .returning({ id: users.id });
      if (set.length === 0) id = undefined;
    }
    // Someone set this account's password meanwhile (another invitation, an operator): the
    // password just chosen is not that account's, so start again from the page.
    if (!id) throw wrongPassword();
    await tx
      .insert(memberships)
      .values({
        organizationId: invitation.organizationId,
        userId: id,
        role: invitation.role,
        createdAt: now,
      })
      .onConflictDoNothing();
    await tx
      .update(invitations)
      .set({ acceptedAt: now, acceptedBy: id })
      .where(eq(invitations.id, invitation.id));
    // Invitations are accepted on the web page their link opens.
    await recordAuditAs(tx, {
      organizationId: invitation.organizationId,
      actor: { type: "user", userId: id },
      channel: "web",
      action: "member.joined",
      targetType: "invitation",
      targetId: invitation.id,
      details: { userId: id, role: invitation.role },
    });
    return id;
  });
  const session = await startWebSession(deps.db, { userId, now, replacing: input.replacing });
  deps.logger.info(
    { userId, sessionId: session.id, organizationId: invitation.organizationId },
    "invitation accepted",
  );
  return { ...session, userId, organizationId: invitation.organizationId };
}
