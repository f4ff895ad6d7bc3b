import type { Context, TypedResponse } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { JSONParsed } from "hono/utils/types";
import { AppError } from "../../errors.ts";

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

/**
 * `c.json(body, status)` carrying the resource's ETag, with the headers kept as a plain object.
 * Given two headers or more (or one set earlier with `c.header`), `c.json` builds a `Headers`,
 * which @hono/node-server then converts back to an object field by field; a plain object it
 * hands to Node as it is. Same status, body and headers either way.
 */
export function jsonWithEtag<T, S extends ContentfulStatusCode>(
  body: T,
  status: S,
  revision: number,
): Response & TypedResponse<JSONParsed<T>, S, "json"> {
  const headers = { "content-type": "application/json", etag: etag(revision) };
  return new Response(JSON.stringify(body), { status, headers }) as Response &
    TypedResponse<JSONParsed<T>, S, "json">;
}
