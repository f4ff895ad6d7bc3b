import { and, eq, gt, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { onboardingSessions } from "../../db/schema/onboarding-sessions.ts";
import { memberships } from "../../db/schema/users.ts";

/** A wallet organisation is claimed once a human owns it (through an approval link). */
export async function isClaimed(db: Db, organizationId: string): Promise<boolean> {
  const [row] = await db
    .select({ one: sql<number>`1` })
    .from(memberships)
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.role, "owner")))
    .limit(1);
  return row !== undefined;
}

/** Sessions of the organisation that have not expired, oldest first. */
export async function activeSessions(db: Db, organizationId: string, now: Date) {
  return db
    .select({ id: onboardingSessions.id, environmentId: onboardingSessions.environmentId })
    .from(onboardingSessions)
    .where(and(eq(onboardingSessions.organizationId, organizationId), gt(onboardingSessions.expiresAt, now)))
    .orderBy(onboardingSessions.createdAt, onboardingSessions.id);
}
