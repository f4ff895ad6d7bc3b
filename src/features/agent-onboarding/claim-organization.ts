import { and, eq } from "drizzle-orm";
import { withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";
import { onboardingSessions } from "../../platform/db/schema/onboarding-sessions.ts";
import { organizations } from "../../platform/db/schema/organizations.ts";
import { memberships } from "../../platform/db/schema/users.ts";
import { sessionOfApprovalToken } from "./approval-link.ts";
import { hasRepository, isClaimed } from "./organization-progress.ts";

export type ApprovalLinkView = {
  organizationId: string;
  organizationName: string;
  wallet: string;
  sessionId: string;
  environmentId: string;
  /** `claim`: nobody owns it yet. Afterwards its owners and admins see what is left to do. */
  stage: "claim" | "connect_repository" | "done";
};

/**
 * What an approval link asks of the signed-in person (the same checks as the claim itself, so a
 * dead link says so before anyone confirms): claim the organisation, then — for its owners and
 * admins — connect a repository. Anyone else is told it has been claimed.
 */
export async function readApprovalLink(args: {
  deps: Deps;
  token: string;
  userId: string;
}): Promise<ApprovalLinkView> {
  const { db } = args.deps;
  const session = await liveSession(args.deps, args.token);
  const [org] = await db
    .select({ id: organizations.id, name: organizations.name, wallet: organizations.walletAddress })
    .from(organizations)
    .where(eq(organizations.id, session.organizationId));
  if (!org) throw deadLink();
  const view = {
    organizationId: org.id,
    organizationName: org.name,
    wallet: org.wallet ?? "",
    sessionId: session.id,
    environmentId: session.environmentId,
  };
  if (!(await isClaimed(db, org.id))) return { ...view, stage: "claim" };
  const [member] = await db
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.organizationId, org.id), eq(memberships.userId, args.userId)));
  if (member?.role !== "owner" && member?.role !== "admin") throw alreadyClaimed();
  const connected = await hasRepository(db, session.environmentId);
  return { ...view, stage: connected ? "done" : "connect_repository" };
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
  return withTransaction(deps.db, async (tx) => {
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
