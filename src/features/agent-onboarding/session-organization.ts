import { and, eq, gt } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { onboardingSessions } from "../../platform/db/schema/onboarding-sessions.ts";
import { hashSessionToken } from "./sessions.ts";

/**
 * The organisation a session token speaks for, on the free polling routes (spec 4D rule 1).
 * Only an unexpired session counts; the token never pays for anything.
 */
export async function sessionOrganization(deps: Deps, token: string | undefined): Promise<string> {
  if (!token) {
    throw new AppError(
      "unauthorized",
      "Send the session token from POST /x402/onboard as `Authorization: Bearer <token>`.",
    );
  }
  const [row] = await deps.db
    .select({ organizationId: onboardingSessions.organizationId })
    .from(onboardingSessions)
    .where(
      and(
        eq(onboardingSessions.tokenHash, hashSessionToken(token)),
        gt(onboardingSessions.expiresAt, deps.clock()),
      ),
    );
  if (!row)
    throw new AppError(
      "unauthorized",
      "This session token is unknown or its session has expired; start a new onboarding session.",
    );
  return row.organizationId;
}

/** `Authorization: Bearer <token>` → the token. */
export const bearerToken = (header: string | undefined): string | undefined =>
  /^Bearer\s+(\S+)$/i.exec(header ?? "")?.[1];
