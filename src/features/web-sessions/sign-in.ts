import { eq } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { users } from "../../platform/db/schema/users.ts";
import { burnVerification, PASSWORD_MAX_LENGTH, verifyPassword } from "./password.ts";
import { type StartedWebSession, startWebSession } from "./start-web-session.ts";
import { claimSignInAttempt, releaseSignInAttempt } from "./throttle.ts";

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/**
 * Email and password → a new session. Every failure looks the same (one message, one status,
 * one argon2 verification's worth of time) whether the email is unknown, has no password yet or
 * the password is wrong, so the form cannot be used to find out who has an account. Each attempt
 * is counted (per email and client address, per email, per address: throttle.ts) before the
 * password is checked; a success gives its attempt back.
 */
export async function signIn(args: {
  deps: Pick<Deps, "db" | "clock" | "logger">;
  input: { email: string; password: string; clientAddress: string; replacing?: string | undefined };
}): Promise<StartedWebSession & { userId: string }> {
  const { deps, input } = args;
  const email = normalizeEmail(input.email);
  const keys = { email, address: input.clientAddress };
  await claimSignInAttempt(deps.db, keys, deps.clock());
  const password = input.password.slice(0, PASSWORD_MAX_LENGTH + 1);
  const [user] = email
    ? await deps.db
        .select({ id: users.id, passwordHash: users.passwordHash })
        .from(users)
        .where(eq(users.email, email))
        .limit(1)
    : [];
  // Unknown email or no password yet: the same argon2 work as a real check, then refuse.
  const ok = user?.passwordHash
    ? await verifyPassword(user.passwordHash, password)
    : await burnVerification(password);
  if (!user || !ok) {
    deps.logger.info({ clientAddress: input.clientAddress }, "web sign-in failed");
    throw new AppError("unauthorized", "The email or password is not right.");
  }
  await releaseSignInAttempt(deps.db, keys, deps.clock());
  const now = deps.clock();
  const session = await startWebSession(deps.db, { userId: user.id, now, replacing: input.replacing });
  // Sign-in belongs to no organisation, so it is logged rather than written to an org's audit.
  deps.logger.info({ userId: user.id, sessionId: session.id }, "web sign-in");
  return { ...session, userId: user.id };
}
