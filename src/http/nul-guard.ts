import type { MiddlewareHandler } from "hono";
import { AppError } from "../errors.ts";
import type { AppEnv } from "./env.ts";

// A JSON \u0000 escape, not preceded by an escaped backslash (`\\u0000` is the text "\u0000").
const escapedNul = /(?:^|[^\\])(?:\\\\)*\\u0000/;

/**
 * Refuses U+0000 anywhere in the path, the query or a JSON body, before anything reads them.
 * PostgreSQL text and jsonb cannot hold it, so such a value would otherwise fail deep inside a
 * query as a 500 (found by test/malformed-input.test.ts); no identifier, name or filter of
 * ours can contain it, so refusing it whole loses nothing. In a URL it can only arrive
 * percent-encoded.
 */
export const refuseNulCharacters = (): MiddlewareHandler<AppEnv> => async (c, next) => {
  if (c.req.url.includes("%00")) {
    throw new AppError("invalid_request", "The path and query must not contain NUL (%00) characters.");
  }
  const method = c.req.method;
  if ((method === "POST" || method === "PUT" || method === "PATCH") && c.req.raw.body !== null) {
    // Hono keeps the text: the route's validator parses the same body afterwards.
    if (escapedNul.test(await c.req.text())) {
      throw new AppError("invalid_request", "JSON strings must not contain NUL (\\u0000) characters.");
    }
  }
  return next();
};
