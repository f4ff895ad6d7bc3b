import { and, eq } from "drizzle-orm";
import { type ServiceContext, withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { recordAuditAs } from "../../platform/audit/record-audit.ts";
import { onboardingSessions } from "../../platform/db/schema/onboarding-sessions.ts";
import { organizations } from "../../platform/db/schema/organizations.ts";
import { memberships } from "../../platform/db/schema/users.ts";
import { verifyToken } from "../../platform/vault/signed-token.ts";
import type { WebUser } from "../web-sessions/index.ts";
import { isClaimed } from "./claim-link.ts";
import { onboardingOperatorSteps } from "./operator-steps.ts";
import type { OperatorStep } from "./schemas.ts";

// Where the approval link is made, for the modules that name it here.
export { approvalUrl } from "./claim-link.ts";

/**
 * What an approval link asks of the signed-in person (a dead link says so before anyone
 * confirms): the session's operator steps — claim the organisation, then, for its owners and
 * admins, install the GitHub App and select a repository. Anyone else is told it has been
 * claimed. The person is no member yet: the context is theirs.
 */
export async function readApprovalLink(args: {
  ctx: ServiceContext<WebUser>;
  input: { token: string };
}): Promise<{
  organizationId: string;
  organizationName: string;
  wallet: string;
  environmentId: string;
  steps: OperatorStep[];
}> {
  const { db } = args.ctx.deps;
  const session = await liveSession(args.ctx.deps, args.input.token);
  const [org] = await db
    .select({ id: organizations.id, name: organizations.name, wallet: organizations.walletAddress })
    .from(organizations)
    .where(eq(organizations.id, session.organizationId));
  if (!org) throw deadLink();
  const view = {
    organizationId: org.id,
    organizationName: org.name,
    wallet: org.wallet ?? "",
    environmentId: session.environmentId,
  };
  const steps = await onboardingOperatorSteps(args.ctx.deps, session);
  if (!(await isClaimed(db, org.id))) return { ...view, steps };
  const [member] = await db
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.organizationId, org.id), eq(memberships.userId, args.ctx.actor.userId)));
  if (member?.role !== "owner" && member?.role !== "admin") throw alreadyClaimed();
  return { ...view, steps };
}

/**
 * A signed-in human becomes the owner of a wallet organisation through an approval link; once
 * (every link is then spent). The row lock keeps two people clicking at once from both owning it.
 */
export async function claimOrganization(args: {
  ctx: ServiceContext<WebUser>;
  input: { token: string };
}): Promise<{ organizationId: string }> {
  const { deps, actor } = args.ctx;
  const session = await liveSession(deps, args.input.token);
  return withTransaction(deps.db, async (tx) => {
    const [org] = await tx
      .select({ id: organizations.id, kind: organizations.kind })
      .from(organizations)
      .where(eq(organizations.id, session.organizationId))
      .for("update");
    if (org?.kind !== "wallet") throw deadLink();
    if (await isClaimed(tx, org.id)) throw alreadyClaimed();
    await tx.insert(memberships).values({ organizationId: org.id, userId: actor.userId, role: "owner" });
    // Not `recordAudit`: the claimant is no actor of the organisation yet; the row names the person.
    await recordAuditAs(tx, {
      organizationId: org.id,
      actor: { type: "user", userId: actor.userId },
      channel: args.ctx.channel,
      action: "organization.claimed",
      targetType: "organization",
      targetId: org.id,
      requestId: args.ctx.requestId,
      details: { onboardingSessionId: session.id },
    });
    return { organizationId: org.id };
  });
}

/** The unexpired session a token we signed names; anything else is a dead link. */
async function liveSession(deps: Deps, token: string) {
  const payload = verifyToken(deps.keyring, "onboarding/approval-link", token) as { s?: unknown } | undefined;
  const [session] =
    typeof payload?.s === "string"
      ? await deps.db.select().from(onboardingSessions).where(eq(onboardingSessions.id, payload.s))
      : [];
  if (!session || session.expiresAt.getTime() <= deps.clock().getTime()) throw deadLink();
  return session;
}

const deadLink = () => new AppError("not_found", "This approval link is not valid or has expired.");
const alreadyClaimed = () =>
  new AppError("conflict", "This organisation has already been claimed; its owner can invite you.");
