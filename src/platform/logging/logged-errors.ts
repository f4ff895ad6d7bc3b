import { pino } from "pino";

const MAX_DEPTH = 6;
const REDACTED = "\nparams: [redacted]";

/**
 * What a failed query wrote of its bound values: Drizzle's query error puts `\nparams: <values>`
 * into its message (so also its stack) and keeps them in `params`. Found on the error, its
 * `cause` chain, aggregated errors and error-valued properties, as exact texts: a pattern could
 * not tell where values that themselves hold newlines end.
 */
function boundValueTexts(error: unknown, found = new Set<string>(), depth = 0): Set<string> {
  if (!(error instanceof Error) || depth > MAX_DEPTH) return found;
  const { query, params } = error as { query?: unknown; params?: unknown };
  if (typeof query === "string" && Array.isArray(params) && params.length > 0)
    found.add(`\nparams: ${params}`);
  boundValueTexts(error.cause, found, depth + 1);
  if (error instanceof AggregateError)
    for (const inner of error.errors) boundValueTexts(inner, found, depth + 1);
  for (const value of Object.values(error))
    if (value instanceof Error) boundValueTexts(value, found, depth + 1);
  return found;
}

function withoutTexts(text: string, texts: Set<string>): string {
  let out = text;
  for (const bound of texts) out = out.split(bound).join(REDACTED);
  return out;
}

/** A copy (the serialised error shares its plain properties with the live error) without them. */
function withoutBoundValues(value: unknown, texts: Set<string>, depth: number): unknown {
  if (typeof value === "string") return withoutTexts(value, texts);
  if (typeof value !== "object" || value === null || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => withoutBoundValues(item, texts, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    copy[key] =
      key === "params" || key === "parameters" ? "[redacted]" : withoutBoundValues(item, texts, depth + 1);
  }
  return copy;
}

/**
 * Errors as pino serialises them, without the values a failed query was bound to. A registration
 * that failed in the database once put the new OAuth client's secret in the log this way. The
 * query text stays: it is ours and says what failed.
 */
export function serializeError(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error);
  if (serialized === error) return error;
  return withoutBoundValues(serialized, boundValueTexts(error), 0);
}

/** An error's message as a log line's `msg`, the same values removed (pino would copy it whole). */
export const errorMessage = (error: Error): string => withoutTexts(error.message, boundValueTexts(error));
