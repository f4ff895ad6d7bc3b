import { and, eq, gt, isNull } from "drizzle-orm";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { invitations } from "../../platform/db/schema/invitations.ts";
import { organizations } from "../../platform/db/schema/organizations.ts";
import { type Role, users } from "../../platform/db/schema/users.ts";
import { hashInvitationToken } from "./invite-member.ts";

export type OpenInvitation = {
  id: string;
  organizationId: string;
  organizationName: string;
  email: string;
  role: Role;
  expiresAt: Date;
  /** The invitee already has a patchbay password: they confirm it instead of choosing one. */
  accountHasPassword: boolean;
};

/**
 * What an invitation link offers, for the page that accepts it. Unknown, expired, used and
 * revoked links all answer the same `invitation_invalid`: the link is the only credential.
 */
export async function findInvitation(args: {
  db: Db;
  now: Date;
  input: { token: string };
}): Promise<OpenInvitation> {
  const [row] = await args.db
    .select({
      id: invitations.id,
      organizationId: invitations.organizationId,
      organizationName: organizations.name,
      email: invitations.email,
      role: invitations.role,
      expiresAt: invitations.expiresAt,
      passwordHash: users.passwordHash,
    })
    .from(invitations)
    .innerJoin(organizations, eq(organizations.id, invitations.organizationId))
    .leftJoin(users, eq(users.email, invitations.email))
    .where(
      and(
        eq(invitations.tokenHash, hashInvitationToken(args.input.token)),
        isNull(invitations.acceptedAt),
        isNull(invitations.revokedAt),
        gt(invitations.expiresAt, args.now),
      ),
    )
    .limit(1);
  if (!row) {
    throw new AppError(
      "invitation_invalid",
      "This invitation link is not valid: it may have expired, been used already or been withdrawn. Ask the organisation's owner for a new one.",
    );
  }
  const { passwordHash, ...rest } = row;
  return { ...rest, accountHasPassword: passwordHash !== null };
}
