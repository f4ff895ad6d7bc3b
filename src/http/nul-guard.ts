import type { MiddlewareHandler } from "hono";
import { AppError } from "../errors.ts";

// A JSON \u0000 escape, not preceded by an escaped backslash (`\\u0000` is the text "\u0000").
const escapedNul = /(?:^|[^\\])(?:\\\\)*\\u0000/;

const urlHasNul = (url: string) => url.includes("%00");
const refused = (where: string) =>
  new AppError("invalid_request", `${where} must not contain NUL characters.`);

/**
 * Refuses U+0000 anywhere in the path, the query or the body, before anything reads them.
 * PostgreSQL text and jsonb cannot hold it, so such a value would otherwise fail deep inside a
 * query as a 500 (found by test/malformed-input.test.ts); no identifier, name, filter or
 * credential of ours can contain it, so refusing it whole loses nothing. In a URL it can only
 * arrive percent-encoded. `json` checks a JSON body's text (REST, x402); `form` a submitted
 * form's fields (web UI).
 */
export const refuseNulCharacters =
  (body: "json" | "form"): MiddlewareHandler =>
  async (c, next) => {
    if (urlHasNul(c.req.url)) throw refused("The path and query");
    const method = c.req.method;
    if ((method === "POST" || method === "PUT" || method === "PATCH") && c.req.raw.body !== null) {
      // Hono keeps what was read: the route parses the same body afterwards.
      if (body === "json" && escapedNul.test(await c.req.text())) throw refused("JSON strings");
      if (body === "form") {
        const fields = await c.req.parseBody({ all: true });
        for (const value of Object.values(fields).flat()) {
          if (typeof value === "string" && value.includes("\0")) throw refused("Form fields");
        }
      }
    }
    return next();
  };

/** Whether any string in a parsed value (JSON arguments, say) holds U+0000. */
export function containsNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\0");
  if (Array.isArray(value)) return value.some(containsNul);
  if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) if (key.includes("\0") || containsNul(item)) return true;
  }
  return false;
}
