import { eq } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { onboardingSessions } from "../../platform/db/schema/onboarding-sessions.ts";
import type { OnboardingSession } from "./schemas.ts";
import { hashSessionToken } from "./session-token.ts";
import { viewSession } from "./session-view.ts";

/**
 * Free polling (spec 4D rule 1): the session token is the only credential. A token of another
 * session, or none, reads as `not_found` so session ids cannot be probed.
 */
export async function readOnboardingSession(args: {
  deps: Deps;
  sessionId: string;
  token: string | undefined;
}): Promise<OnboardingSession> {
  if (!args.token) {
    throw new AppError(
      "unauthorized",
      "Send the session token from POST /x402/onboard as `Authorization: Bearer <token>`.",
    );
  }
  const [row] = await args.deps.db
    .select()
    .from(onboardingSessions)
    .where(eq(onboardingSessions.tokenHash, hashSessionToken(args.token)));
  if (!row || row.id !== args.sessionId)
    throw new AppError("not_found", "No such onboarding session for this token.");
  return viewSession(args.deps, row);
}
