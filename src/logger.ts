import type { DestinationStream, Logger } from "pino";
import { pino } from "pino";

export type { Logger };

/**
 * Paths redacted wherever they appear. Request logging never records headers or bodies in
 * the first place; this list is the second wall for anything a verb logs by mistake.
 */
const redactPaths = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "apiKey",
  "*.apiKey",
  "secret",
  "*.secret",
  "credential",
  "*.credential",
  "token",
  "*.token",
  "password",
  "*.password",
  "value",
  "*.value",
  "kek",
  "*.kek",
];

/** A failed query's bound values in its message and stack: up to the first stack frame or the end. */
const queryParams = /\nparams: [\s\S]*?(?=\n\s+at |$)/g;
const MAX_DEPTH = 6;

/**
 * Errors as pino serialises them, without the values a failed query was bound to. Drizzle's
 * query error writes every parameter into its message (so also its stack) and keeps them in
 * `params`; a registration that failed in the database put the new OAuth client's secret in the
 * log this way. The query text stays: it is ours and says what failed.
 */
function errWithoutQueryValues(err: unknown): unknown {
  const serialized = pino.stdSerializers.err(err as Error);
  return serialized === err ? err : withoutQueryValues(serialized, 0);
}

function withoutQueryValues(value: unknown, depth: number): unknown {
  if (typeof value === "string") return value.replace(queryParams, "\nparams: [redacted]");
  if (typeof value !== "object" || value === null || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => withoutQueryValues(item, depth + 1));
  // A copy: the serialised error shares its plain properties with the live error object.
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    copy[key] = key === "params" || key === "parameters" ? "[redacted]" : withoutQueryValues(item, depth + 1);
  }
  return copy;
}

export function createLogger(opts: {
  level: string;
  pretty?: boolean;
  destination?: DestinationStream;
}): Logger {
  const base = {
    level: opts.level,
    redact: { paths: redactPaths, censor: "[redacted]" },
    serializers: { err: errWithoutQueryValues, error: errWithoutQueryValues },
    base: undefined,
  };
  if (opts.destination) return pino(base, opts.destination);
  if (opts.pretty) {
    return pino({
      ...base,
      transport: { target: "pino-pretty", options: { translateTime: "SYS:HH:MM:ss" } },
    });
  }
  // Synchronous stdout on purpose: an asynchronous destination (`sync: false`) measured no gain
  // (docs/performance.md), and it can lose the last lines when the process dies hard.
  return pino(base);
}
