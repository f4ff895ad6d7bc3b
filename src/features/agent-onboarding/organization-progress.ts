import { and, eq, gt, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/client.ts";
import { onboardingSessions } from "../../platform/db/schema/onboarding-sessions.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import { memberships } from "../../platform/db/schema/users.ts";

/** A wallet organisation is claimed once a human owns it (through an approval link). */
export async function isClaimed(db: Db, organizationId: string): Promise<boolean> {
  const [row] = await db
    .select({ one: sql<number>`1` })
    .from(memberships)
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.role, "owner")))
    .limit(1);
  return row !== undefined;
}

/**
 * The environment has a repository patchbay may propose fixes to: one a person registered (a
 * local path, or one they selected when installing the GitHub App).
 */
export async function hasRepository(db: Db, environmentId: string): Promise<boolean> {
  const [row] = await db
    .select({ one: sql<number>`1` })
    .from(repositories)
    .where(eq(repositories.environmentId, environmentId))
    .limit(1);
  return row !== undefined;
}

/** What a human still has to do for an agent's organisation, in order. */
export type OperatorStep = { step: "claim_organization" | "connect_repository"; done: boolean };

export async function operatorSteps(
  db: Db,
  scope: { organizationId: string; environmentId: string },
): Promise<OperatorStep[]> {
  const [claimed, connected] = await Promise.all([
    isClaimed(db, scope.organizationId),
    hasRepository(db, scope.environmentId),
  ]);
  return [
    { step: "claim_organization", done: claimed },
    { step: "connect_repository", done: connected },
  ];
}

/** Sessions of the organisation that have not expired, oldest first. */
export async function activeSessions(db: Db, organizationId: string, now: Date) {
  return db
    .select({ id: onboardingSessions.id, environmentId: onboardingSessions.environmentId })
    .from(onboardingSessions)
    .where(and(eq(onboardingSessions.organizationId, organizationId), gt(onboardingSessions.expiresAt, now)))
    .orderBy(onboardingSessions.createdAt, onboardingSessions.id);
}
