import { and, eq } from "drizzle-orm";
import { type ServiceContext, withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";
import { onboardingSessions } from "../../platform/db/schema/onboarding-sessions.ts";
import { organizations } from "../../platform/db/schema/organizations.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import { memberships } from "../../platform/db/schema/users.ts";
import { signToken, verifyToken } from "../../platform/vault/signed-token.ts";
import type { WebUser } from "../web-sessions/index.ts";

/**
 * The link a human operator opens to take over a wallet organisation: signed, naming the session,
 * so every poll can show it without storing a secret. It works once and dies with the session.
 */
export function approvalUrl(deps: Pick<Deps, "keyring" | "config">, sessionId: string): string {
  const token = signToken(deps.keyring, "onboarding/approval-link", { s: sessionId });
  // In the query: the access log records paths, never query strings.
  return `${deps.config.baseUrl}/approve?token=${encodeURIComponent(token)}`;
}

const isClaimed = async (db: Db, organizationId: string) =>
  (await db.$count(
    memberships,
    and(eq(memberships.organizationId, organizationId), eq(memberships.role, "owner")),
  )) > 0;

/** A repository a person registered or selected, which patchbay may propose fixes to. */
const hasRepository = async (db: Db, environmentId: string) =>
  (await db.$count(repositories, eq(repositories.environmentId, environmentId))) > 0;

/** What a human still has to do for an agent's organisation, in order. */
export type OperatorStep = { step: "claim_organization" | "connect_repository"; done: boolean };

export async function operatorSteps(
  db: Db,
  scope: { organizationId: string; environmentId: string },
): Promise<OperatorStep[]> {
  return [
    { step: "claim_organization", done: await isClaimed(db, scope.organizationId) },
    { step: "connect_repository", done: await hasRepository(db, scope.environmentId) },
  ];
}

/**
 * What an approval link asks of the signed-in person (a dead link says so before anyone
 * confirms): claim the organisation, then, for its owners and admins, connect a repository.
 * Anyone else is told it has been claimed. The person is no member yet: the context is theirs.
 */
export async function readApprovalLink(args: {
  ctx: ServiceContext<WebUser>;
  input: { token: string };
}): Promise<{
  organizationId: string;
  organizationName: string;
  wallet: string;
  environmentId: string;
  stage: "claim" | "connect_repository" | "done";
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
  if (!(await isClaimed(db, org.id))) return { ...view, stage: "claim" };
  const [member] = await db
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.organizationId, org.id), eq(memberships.userId, args.ctx.actor.userId)));
  if (member?.role !== "owner" && member?.role !== "admin") throw alreadyClaimed();
  const connected = await hasRepository(db, session.environmentId);
  return { ...view, stage: connected ? "done" : "connect_repository" };
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
    await tx.insert(auditLog).values({
      organizationId: org.id,
      actorType: "user",
      actorId: actor.userId,
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
