import { AppError } from "../../errors.ts";

/** True for PostgreSQL's unique_violation (23505), however the driver wraps it. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  return e?.code === "23505" || e?.cause?.code === "23505";
}

/** How long a client should wait before retrying while the database is away. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/**
 * Codes that mean "the database could not be reached or dropped the connection", as opposed to
 * "the query was wrong": postgres.js's own connection errors, Node's socket errors, and the
 * SQLSTATEs a server sends while it is shutting down, starting or full (class 08 is checked
 * apart). pg-boss's `pg` pool says the same in words, matched below.
 */
const unavailableCodes = new Set([
  // postgres.js
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  "CONNECT_TIMEOUT",
  // Node sockets and DNS
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  // PostgreSQL: admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections
  "57P01",
  "57P02",
  "57P03",
  "53300",
]);

const unavailableMessages =
  /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED/;

/**
 * True when `error`, or anything it wraps (drizzle's query error keeps the driver's as `cause`;
 * a failed multi-address connect is an AggregateError), says the database is unreachable. Such a
 * failure is the weather, not a bug: the caller is told to retry (503), not that we broke (500).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0) {
    const e = pending.pop();
    if (typeof e !== "object" || e === null || seen.has(e)) continue;
    seen.add(e);
    const { code, cause, errors, message } = e as {
      code?: unknown;
      cause?: unknown;
      errors?: unknown;
      message?: unknown;
    };
    if (typeof code === "string" && (unavailableCodes.has(code) || code.startsWith("08"))) return true;
    if (typeof message === "string" && unavailableMessages.test(message)) return true;
    pending.push(cause);
    if (Array.isArray(errors)) pending.push(...errors);
  }
  return false;
}

/** The answer every transport gives when a request needed the database and it was away. */
export function databaseUnavailable(): AppError {
  return new AppError("database_unavailable", "The database is unavailable; retry shortly.", {
    retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
  });
}

/**
 * The AppError a transport answers for `error`: itself when it is one, `database_unavailable`
 * when the database was away, otherwise undefined (a fault of ours: a 500).
 */
export function asKnownError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  if (isDatabaseUnavailable(error)) return databaseUnavailable();
  return undefined;
}
