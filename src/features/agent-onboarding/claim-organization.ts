import { eq } from "drizzle-orm";
import { auditLog } from "../../db/schema/audit-log.ts";
import { onboardingSessions } from "../../db/schema/onboarding-sessions.ts";
import { organizations } from "../../db/schema/organizations.ts";
import { memberships } from "../../db/schema/users.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { sessionOfApprovalToken } from "./approval-link.ts";
import { isClaimed } from "./organization-progress.ts";

export type ClaimPreview = {
  organizationId: string;
  organizationName: string;
  wallet: string;
  sessionId: string;
};

/**
 * What an approval link offers, for the page that asks the human to confirm. The same checks
 * as the claim itself, so a dead link says so before anyone confirms.
 */
export async function previewClaim(args: { deps: Deps; token: string }): Promise<ClaimPreview> {
  const session = await liveSession(args.deps, args.token);
  const [org] = await args.deps.db
    .select({ id: organizations.id, name: organizations.name, wallet: organizations.walletAddress })
    .from(organizations)
    .where(eq(organizations.id, session.organizationId));
  if (!org) throw deadLink();
  if (await isClaimed(args.deps.db, org.id)) throw alreadyClaimed();
  return {
    organizationId: org.id,
    organizationName: org.name,
    wallet: org.wallet ?? "",
    sessionId: session.id,
  };
}

/**
 * A signed-in human takes over a wallet organisation through the approval link of one of its
 * onboarding sessions and becomes its owner. Works once: afterwards the organisation has an
 * owner and every link of it is spent. The organisation row is locked so two people clicking at
 * once cannot both become owner.
 */
export async function claimOrganization(args: {
  deps: Deps;
  token: string;
  userId: string;
  requestId: string;
}): Promise<{ organizationId: string }> {
  const { deps } = args;
  const session = await liveSession(deps, args.token);
  return deps.db.transaction(async (tx) => {
    const [org] = await tx
      .select({ id: organizations.id, kind: organizations.kind })
      .from(organizations)
      .where(eq(organizations.id, session.organizationId))
      .for("update");
    if (org?.kind !== "wallet") throw deadLink();
    if (await isClaimed(tx, org.id)) throw alreadyClaimed();
    await tx.insert(memberships).values({ organizationId: org.id, userId: args.userId, role: "owner" });
    await tx.insert(auditLog).values({
      organizationId: org.id,
      actorType: "user",
      actorId: args.userId,
      action: "organization.claimed",
      targetType: "organization",
      targetId: org.id,
      requestId: args.requestId,
      details: { onboardingSessionId: session.id },
    });
    return { organizationId: org.id };
  });
}

async function liveSession(deps: Deps, token: string) {
  const sessionId = sessionOfApprovalToken(deps, token);
  if (!sessionId) throw deadLink();
  const [session] = await deps.db
    .select()
    .from(onboardingSessions)
    .where(eq(onboardingSessions.id, sessionId));
  if (!session || session.expiresAt.getTime() <= deps.clock().getTime()) throw deadLink();
  return session;
}

const deadLink = () => new AppError("not_found", "This approval link is not valid or has expired.");
const alreadyClaimed = () =>
  new AppError("conflict", "This organisation has already been claimed; its owner can invite you.");
