import { withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { newId } from "../../ids.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";
import { onboardingSessions } from "../../platform/db/schema/onboarding-sessions.ts";
import type { OnboardInput, StartedOnboarding } from "./schemas.ts";
import { generateSessionToken } from "./session-token.ts";
import { viewSession } from "./session-view.ts";
import type { Wallet } from "./wallet.ts";
import { walletScope } from "./wallet-environment.ts";

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
  const scope = await walletScope(deps, wallet, args.input.environmentId);
  const now = deps.clock();
  const { token, hash } = generateSessionToken();
  const id = newId("obs");
  const row = await withTransaction(deps.db, async (tx) => {
    const [inserted] = await tx
      .insert(onboardingSessions)
      .values({
        id,
        organizationId: scope.organizationId,
        environmentId: scope.environmentId,
        tokenHash: hash,
        startedBy: wallet.address,
        state: "awaiting-telemetry",
        stateChangedAt: now,
        createdAt: now,
        expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
      })
      .returning();
    await tx.insert(auditLog).values({
      organizationId: scope.organizationId,
      actorType: "wallet",
      actorId: wallet.address,
      action: "onboarding.started",
      targetType: "onboarding_session",
      targetId: id,
      requestId: args.requestId,
      details: { environmentId: scope.environmentId },
    });
    return inserted;
  });
  if (!row) throw new Error("insert returned no row");
  return { ...(await viewSession(deps, row)), sessionToken: token };
}
