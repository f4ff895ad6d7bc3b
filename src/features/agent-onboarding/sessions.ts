import { createHash } from "node:crypto";
import { and, eq } from "drizzle-orm";
import type { FreeReader, WalletActor } from "../../actor.ts";
import { type ServiceContext, withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { newId, randomToken } from "../../ids.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { type OnboardingState, onboardingSessions } from "../../platform/db/schema/onboarding-sessions.ts";
import { callerEnvironment } from "../environments/index.ts";
import { hasTelemetry } from "../telemetry/index.ts";
import { approvalUrl } from "./claim-link.ts";
import { sessionActions } from "./next-actions.ts";
import { onboardingOperatorSteps } from "./operator-steps.ts";
import type { OnboardInput, OnboardingSession, OperatorStep, StartedOnboarding } from "./schemas.ts";

/** Sessions last a day: long enough for a human to answer an approval link. */
const SESSION_TTL_MS = 24 * 60 * 60_000;

/** Session tokens are `obt_` + 192 random bits: random enough to be stored as a plain SHA-256. */
export const hashSessionToken = (token: string): string => createHash("sha256").update(token).digest("hex");

/** Starts a guided onboarding session (spec 4D); its token is returned here only, for free polling. */
export async function startOnboarding(args: {
  ctx: ServiceContext<WalletActor>;
  input: OnboardInput;
}): Promise<StartedOnboarding> {
  const { ctx } = args;
  const environmentId = await callerEnvironment(ctx, args.input.environmentId);
  const now = ctx.deps.clock();
  const token = `obt_${randomToken(24)}`;
  const row: SessionRow = {
    id: newId("obs"),
    organizationId: ctx.actor.organizationId,
    environmentId,
    tokenHash: hashSessionToken(token),
    startedBy: ctx.actor.wallet.address,
    state: "awaiting-telemetry",
    stateChangedAt: now,
    createdAt: now,
    expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
  };
  await withTransaction(ctx, async (tx) => {
    await tx.insert(onboardingSessions).values(row);
    await recordAudit(tx, ctx, {
      action: "onboarding.started",
      targetType: "onboarding_session",
      targetId: row.id,
      environmentId: environmentId,
      details: { environmentId },
    });
  });
  return { ...(await viewSession(ctx.deps, row)), sessionToken: token };
}

/**
 * Free polling (spec 4D rule 1): a token reads its own session only, the organisation's signed-in
 * wallet any session of its organisation; anything else is `not_found`.
 */
export async function readOnboardingSession(args: {
  ctx: ServiceContext<FreeReader>;
  input: { sessionId: string };
}): Promise<OnboardingSession> {
  const { ctx, input } = args;
  const readable = ctx.actor.type === "wallet" || ctx.actor.id === input.sessionId;
  const [row] = readable
    ? await ctx.deps.db
        .select()
        .from(onboardingSessions)
        .where(
          and(
            eq(onboardingSessions.id, input.sessionId),
            eq(onboardingSessions.organizationId, ctx.actor.organizationId),
          ),
        )
    : [];
  if (!row) throw new AppError("not_found", "No such onboarding session for this caller.");
  return viewSession(ctx.deps, row);
}

type SessionRow = typeof onboardingSessions.$inferSelect;

/** The session now; a state that moved is recorded (conditionally: concurrent readers record it once). */
async function viewSession(deps: Deps, row: SessionRow): Promise<OnboardingSession> {
  const now = deps.clock();
  const { state, operatorSteps } = await sessionState(deps, row, now);
  if (state !== row.state) {
    await deps.db
      .update(onboardingSessions)
      .set({ state, stateChangedAt: now })
      .where(and(eq(onboardingSessions.id, row.id), eq(onboardingSessions.state, row.state)));
  }
  const view = {
    sessionId: row.id,
    state,
    organizationId: row.organizationId,
    environmentId: row.environmentId,
    createdAt: row.createdAt.toISOString(),
    stateChangedAt: (state === row.state ? row.stateChangedAt : now).toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    ...(operatorSteps ? { approvalUrl: approvalUrl(deps, row.id), operatorSteps } : {}),
  };
  return { ...view, next_actions: await sessionActions(deps, view) };
}

/**
 * Where a session stands (DESIGN §7): telemetry first (the agent can do that alone), then a human
 * claims the organisation, installs the GitHub App (where one is needed) and selects a
 * repository, then ready. Derived on every read.
 */
async function sessionState(
  deps: Deps,
  session: SessionRow,
  now: Date,
): Promise<{ state: OnboardingState; operatorSteps?: OperatorStep[] }> {
  if (session.expiresAt.getTime() <= now.getTime()) return { state: "expired" };
  if (!(await hasTelemetry(deps.db, session.environmentId))) return { state: "awaiting-telemetry" };
  const steps = await onboardingOperatorSteps(deps, session);
  if (steps.some((s) => !s.done)) return { state: "awaiting-operator", operatorSteps: steps };
  return { state: "ready" };
}
