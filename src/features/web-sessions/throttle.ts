import { createHash } from "node:crypto";
import { and, eq, gt, inArray, lte, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { signInThrottle } from "../../db/schema/web-sessions.ts";
import { AppError } from "../../errors.ts";
import {
  SIGN_IN_MAX_FAILURES_PER_ADDRESS,
  SIGN_IN_MAX_FAILURES_PER_EMAIL,
  SIGN_IN_WINDOW_MS,
} from "./session-policy.ts";

/** What a failed sign-in counts against: the email (hashed, never stored plain) and the client. */
export type ThrottleKeys = { email: string; address: string };

const keysOf = (keys: ThrottleKeys) => ({
  email: `email:${createHash("sha256").update(keys.email).digest("hex")}`,
  address: `addr:${keys.address}`,
});

/**
 * Refuses with `rate_limited` when the email or the client address has too many recent
 * failures. Checked before the password, so a locked-out guess learns nothing, and with the
 * same answer whether or not the email has an account.
 */
export async function assertNotThrottled(db: Db, keys: ThrottleKeys, now: Date): Promise<void> {
  const k = keysOf(keys);
  const since = new Date(now.getTime() - SIGN_IN_WINDOW_MS);
  const rows = await db
    .select()
    .from(signInThrottle)
    .where(and(inArray(signInThrottle.key, [k.email, k.address]), gt(signInThrottle.windowStartedAt, since)));
  for (const row of rows) {
    const limit = row.key === k.email ? SIGN_IN_MAX_FAILURES_PER_EMAIL : SIGN_IN_MAX_FAILURES_PER_ADDRESS;
    if (row.failures >= limit) {
      const retryAfterSeconds = Math.ceil(
        (row.windowStartedAt.getTime() + SIGN_IN_WINDOW_MS - now.getTime()) / 1000,
      );
      throw new AppError(
        "rate_limited",
        `Too many failed sign-in attempts. Try again in ${Math.ceil(retryAfterSeconds / 60)} minutes.`,
        { retryAfterSeconds },
      );
    }
  }
}

/** Counts one failure against both keys; a window older than the limit's starts again at 1. */
export async function recordSignInFailure(db: Db, keys: ThrottleKeys, now: Date): Promise<void> {
  const k = keysOf(keys);
  const since = new Date(now.getTime() - SIGN_IN_WINDOW_MS);
  // Raw SQL parameters go to the driver as they are, and postgres-js takes no Date there.
  const expired = sql`${signInThrottle.windowStartedAt} <= ${since.toISOString()}`;
  await db
    .insert(signInThrottle)
    .values([
      { key: k.email, failures: 1, windowStartedAt: now },
      { key: k.address, failures: 1, windowStartedAt: now },
    ])
    .onConflictDoUpdate({
      target: signInThrottle.key,
      set: {
        failures: sql`case when ${expired} then 1 else ${signInThrottle.failures} + 1 end`,
        windowStartedAt: sql`case when ${expired} then ${now.toISOString()}::timestamptz else ${signInThrottle.windowStartedAt} end`,
      },
    });
}

/**
 * A successful sign-in clears its email's count. The address count stays: otherwise one valid
 * account would let a client reset its own counter between guesses at other accounts.
 */
export async function clearEmailFailures(db: Db, email: string): Promise<void> {
  await db.delete(signInThrottle).where(eq(signInThrottle.key, keysOf({ email, address: "" }).email));
}

export async function sweepSignInThrottle(db: Db, now: Date): Promise<void> {
  await db
    .delete(signInThrottle)
    .where(lte(signInThrottle.windowStartedAt, new Date(now.getTime() - SIGN_IN_WINDOW_MS)));
}
