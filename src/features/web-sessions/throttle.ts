import { createHash } from "node:crypto";
import { and, eq, gt, lte, type SQL, sql } from "drizzle-orm";
import ipaddr from "ipaddr.js";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { rowsOf } from "../../platform/db/result-rows.ts";
import { signInLimits, signInThrottle } from "../../platform/db/schema/web-sessions.ts";
import {
  SIGN_IN_MAX_ATTEMPTS_PER_ADDRESS,
  SIGN_IN_MAX_ATTEMPTS_PER_EMAIL,
  SIGN_IN_PAIR_FIRST_DELAY_MS,
  SIGN_IN_PAIR_FREE_ATTEMPTS,
  SIGN_IN_PAIR_MAX_DELAY_MS,
  SIGN_IN_PAIR_MEMORY_MS,
  SIGN_IN_WINDOW_MS,
} from "./session-policy.ts";

/** Who is signing in to what: the email as typed (normalised) and the client address. */
export type ThrottleKeys = { email: string; address: string };

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * An IPv6 client is usually handed a whole /64, so it is limited as its /64: otherwise it could
 * step through 2^64 addresses, each with fresh limits. IPv4 and "unknown" stay as they are.
 */
function addressKey(address: string): string {
  if (!ipaddr.IPv6.isValid(address)) return address;
  const parsed = ipaddr.IPv6.parse(address);
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/64`).toString()}/64`;
}

const keysOf = (keys: ThrottleKeys) => {
  const address = addressKey(keys.address);
  return {
    pair: `pair:${sha256(`${keys.email}\n${address}`)}`,
    email: `email:${sha256(keys.email)}`,
    address: `addr:${address}`,
  };
};

// Raw SQL parameters go to the driver as they are, and postgres-js takes no Date there.
const at = (time: Date): SQL => sql`${time.toISOString()}::timestamptz`;
const plusMs = (time: Date, ms: number | SQL): SQL => sql`(${at(time)} + ${ms}::float8 * interval '1 ms')`;

/** The wait after a pair's `n`th attempt: none within the free ones, then doubling up to the cap. */
const pairDelayMs = (n: SQL): SQL => sql`(case when ${n} < ${SIGN_IN_PAIR_FREE_ATTEMPTS}::int then 0
  else least(${SIGN_IN_PAIR_FIRST_DELAY_MS}::float8 * power(2, least(${n} - ${SIGN_IN_PAIR_FREE_ATTEMPTS}::int, 16)),
             ${SIGN_IN_PAIR_MAX_DELAY_MS}::float8) end)`;

const secondsUntil = (column: SQL, now: Date): SQL =>
  sql`greatest(ceil(extract(epoch from (${column} - ${at(now)})))::int, 1)`;

/**
 * Counts one sign-in attempt against its pair, its address and its email, then refuses with
 * `rate_limited` if any limit is past. Runs before the password is checked, and the counting and
 * the deciding are one statement: every attempt gets its own count from the database, whatever
 * instance it lands on, so N concurrent attempts let at most the limit through to argon2.
 *
 * The stages are chained: the address counts only what its pair let through, and the email only
 * what the pair and the address let through, so an attacker whose own pair or address is
 * refused spends nothing of the owner's per-email ceiling. An attempt refused by a later stage
 * still counts for the earlier ones (they are the attacker's own). Every refusal gives the same
 * answer whether or not the email has an account.
 */
export async function claimSignInAttempt(db: Db, keys: ThrottleKeys, now: Date): Promise<void> {
  const k = keysOf(keys);
  const expired = sql`t.expires_at <= ${at(now)}`;
  const pairAttempts = sql`(case when ${expired} then 1 else t.attempts + 1 end)`;
  // A fixed window: the first attempt after one ends starts the next.
  const counted = (key: string, limit: number, onlyIf: SQL) => sql`
    insert into sign_in_limits as t (key, attempts, expires_at)
    select ${key}, 1, ${plusMs(now, SIGN_IN_WINDOW_MS)} where ${onlyIf}
    on conflict (key) do update set
      attempts = case when ${expired} then 1 else t.attempts + 1 end,
      expires_at = case when ${expired} then excluded.expires_at else t.expires_at end
    returning t.attempts <= ${limit}::int as within, ${secondsUntil(sql`t.expires_at`, now)} as retry_after`;
  // The pair's row is updated only outside its delay; inside it the row is left alone and nothing
  // is returned, so a refused attempt neither counts nor pushes the wait further out. Its memory
  // slides: each attempt let through keeps it another SIGN_IN_PAIR_MEMORY_MS.
  const result = await db.execute(sql`
    with pair as (
      insert into sign_in_limits as t (key, attempts, expires_at, not_before)
      values (${k.pair}, 1, ${plusMs(now, SIGN_IN_PAIR_MEMORY_MS)}, ${plusMs(now, pairDelayMs(sql`1`))})
      on conflict (key) do update set
        attempts = ${pairAttempts},
        expires_at = excluded.expires_at,
        not_before = ${plusMs(now, pairDelayMs(pairAttempts))}
      where ${expired} or t.not_before is null or t.not_before <= ${at(now)}
      returning t.attempts
    ),
    address as (${counted(k.address, SIGN_IN_MAX_ATTEMPTS_PER_ADDRESS, sql`exists (select from pair)`)}),
    email as (${counted(k.email, SIGN_IN_MAX_ATTEMPTS_PER_EMAIL, sql`exists (select from address where within)`)})
    select 'address' as stage, within, retry_after from address
    union all
    select 'email', within, retry_after from email`);
  const stages = rowsOf(result);
  const refused = stages.filter((s) => s.within !== true);
  if (stages.length === 0) {
    // The pair is inside its delay; read how long is left (for the message only: the
    // decision above was already made under the row's lock).
    const [row] = await db
      .select({ retryAfter: secondsUntil(sql`${signInLimits.notBefore}`, now).mapWith(Number) })
      .from(signInLimits)
      .where(eq(signInLimits.key, k.pair));
    throw rateLimited(row?.retryAfter ?? 1);
  }
  if (refused.length > 0) throw rateLimited(Math.max(...refused.map((s) => Number(s.retry_after))));
}

/**
 * After a successful sign-in: the pair is cleared (its delay was for guesses at this password,
 * which is now proven), and the address and email get back only the one attempt this sign-in
 * took. Their earlier failures stay, so signing in to an account of one's own between guesses
 * resets nothing. One single-row statement each: never two limit rows locked at once, so no
 * lock order to get wrong against `claimSignInAttempt`.
 */
export async function releaseSignInAttempt(db: Db, keys: ThrottleKeys, now: Date): Promise<void> {
  const k = keysOf(keys);
  await db.delete(signInLimits).where(eq(signInLimits.key, k.pair));
  for (const key of [k.address, k.email]) {
    await db
      .update(signInLimits)
      .set({ attempts: sql`greatest(${signInLimits.attempts} - 1, 0)` })
      .where(and(eq(signInLimits.key, key), gt(signInLimits.expiresAt, now)));
  }
}

function rateLimited(retryAfterSeconds: number): AppError {
  return new AppError(
    "rate_limited",
    `Too many failed sign-in attempts. Try again in ${waitText(retryAfterSeconds)}.`,
    { retryAfterSeconds },
  );
}

const waitText = (seconds: number) => {
  if (seconds < 60) return seconds === 1 ? "a second" : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? "a minute" : `${minutes} minutes`;
};

export async function sweepSignInThrottle(db: Db, now: Date): Promise<void> {
  await db.delete(signInLimits).where(lte(signInLimits.expiresAt, now));
  await db
    .delete(signInThrottle)
    .where(lte(signInThrottle.windowStartedAt, new Date(now.getTime() - SIGN_IN_WINDOW_MS)));
}
