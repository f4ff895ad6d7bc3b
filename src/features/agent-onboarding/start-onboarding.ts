import { and, eq } from "drizzle-orm";
import { auditLog } from "../../db/schema/audit-log.ts";
import { environments } from "../../db/schema/environments.ts";
import { onboardingSessions } from "../../db/schema/onboarding-sessions.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import type { OnboardInput, StartedOnboarding } from "./schemas.ts";
import { generateSessionToken } from "./session-token.ts";
import { viewSession } from "./session-view.ts";
import { firstEnvironmentId } from "./sign-up-wallet.ts";
import { signupRequired } from "./signup-required.ts";
import { findWalletOrganization, type Wallet } from "./wallet.ts";

/** Sessions last a day: long enough for a human to answer an approval link. */
export const SESSION_TTL_MS = 24 * 60 * 60_000;

/**
 * Starts a guided onboarding session for the payer's organisation (spec part 4D). The session
 * token is returned here only; polling with it is free and it never pays for anything.
 */
export async function startOnboarding(args: {
  deps: Deps;
  wallet: Wallet;
  input: OnboardInput;
  requestId: string;
}): Promise<StartedOnboarding> {
  const { deps, wallet } = args;
  const org = await findWalletOrganization(deps.db, wallet);
  if (!org) throw signupRequired(deps);
  const environmentId = args.input.environmentId ?? (await firstEnvironmentId(deps.db, org.id));
  const [environment] = environmentId
    ? await deps.db
        .select({ id: environments.id })
        .from(environments)
        .where(and(eq(environments.id, environmentId), eq(environments.organizationId, org.id)))
    : [];
  if (!environment) throw new AppError("not_found", "The organisation has no such environment.");
  const now = deps.clock();
  const { token, hash } = generateSessionToken();
  const id = newId("obs");
  const row = await deps.db.transaction(async (tx) => {
    const [inserted] = await tx
      .insert(onboardingSessions)
      .values({
        id,
        organizationId: org.id,
        environmentId: environment.id,
        tokenHash: hash,
        startedBy: wallet.address,
        state: "awaiting-telemetry",
        stateChangedAt: now,
        createdAt: now,
        expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
      })
      .returning();
    await tx.insert(auditLog).values({
      organizationId: org.id,
      actorType: "wallet",
      actorId: wallet.address,
      action: "onboarding.started",
      targetType: "onboarding_session",
      targetId: id,
      requestId: args.requestId,
      details: { environmentId: environment.id },
    });
    return inserted;
  });
  if (!row) throw new Error("insert returned no row");
  return { ...(await viewSession(deps, row)), sessionToken: token };
}
