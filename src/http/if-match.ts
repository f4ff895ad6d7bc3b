import type { Context } from "hono";
import { AppError } from "../errors.ts";

const strongRevision = /^"(\d{1,9})"$/;

/**
 * Reads `If-Match: "<revision>"`. Missing → 428 (we never guess a revision for the caller);
 * anything else than one strong, quoted revision → 400.
 */
export function ifMatch(c: Context): number {
  const raw = c.req.header("if-match");
  if (raw === undefined || raw.trim() === "") {
    throw new AppError(
      "precondition_required",
      'This change needs If-Match: "<revision>" with the revision from your latest read.',
    );
  }
  const match = strongRevision.exec(raw.trim());
  if (!match?.[1]) {
    throw new AppError("invalid_request", 'If-Match must be one quoted revision, e.g. If-Match: "3".', {
      header: "If-Match",
    });
  }
  return Number(match[1]);
}

/** ETag for a revisioned resource, the value clients send back in If-Match. */
export const etag = (revision: number): string => `"${revision}"`;
