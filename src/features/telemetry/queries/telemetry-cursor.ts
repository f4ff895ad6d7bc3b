import { AppError } from "../../../errors.ts";

/**
 * Opaque keyset cursors: the sort key of the last item of a page, as base64url JSON. Each query
 * checks the shape it expects, so a cursor from another listing (or a made-up one) is a clear
 * `invalid_request`, never a 500.
 */
export const encodeCursor = (position: (string | number)[]): string =>
  Buffer.from(JSON.stringify(position)).toString("base64url");

export function decodeCursor<T>(
  raw: string | undefined,
  parse: (value: unknown[]) => T | undefined,
): T | undefined {
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
  } catch {
    value = undefined;
  }
  const parsed = Array.isArray(value) ? parse(value) : undefined;
  if (parsed === undefined) {
    throw new AppError("invalid_request", "cursor is not a cursor this listing issued.", {
      parameter: "cursor",
    });
  }
  return parsed;
}

const isoPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
export const isIsoTime = (value: unknown): value is string =>
  typeof value === "string" && isoPattern.test(value);
