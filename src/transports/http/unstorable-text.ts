import { isUtf8 } from "node:buffer";
import type { Context, MiddlewareHandler } from "hono";
import { AppError } from "../../errors.ts";
import { jsonShape } from "../../platform/mcp-client/json-shape.ts";
import { parseFormBody } from "./form-body.ts";

// A JSON \u0000 escape, not preceded by an escaped backslash (`\\u0000` is the text "\u0000").
const escapedNul = /(?:^|[^\\])(?:\\\\)*\\u0000/;

const urlHasNul = (url: string) => url.includes("%00");
const refused = (where: string) =>
  new AppError("invalid_request", `${where} must not contain NUL characters.`);

/**
 * Refuses text the database cannot store as sent, before anything reads the request:
 *
 * - U+0000 anywhere in the path, the query or the body. PostgreSQL text and jsonb cannot hold
 *   it, so such a value would otherwise fail deep inside a query as a 500 (found by
 *   test/malformed-input.test.ts); no identifier, name, filter or credential of ours can contain
 *   it, so refusing it whole loses nothing. In a URL it can only arrive percent-encoded.
 * - A JSON body that is not UTF-8, or whose strings hold a lone surrogate (`"\ud800"`). Decoding
 *   would quietly turn either into U+FFFD, so what was stored would differ from what was sent.
 *
 * `json` checks a JSON body (REST, x402); `form` a submitted form's fields (web UI).
 */
export const refuseUnstorableText =
  (body: "json" | "form"): MiddlewareHandler =>
  async (c, next) => {
    if (urlHasNul(c.req.url)) throw refused("The path and query");
    const method = c.req.method;
    if ((method === "POST" || method === "PUT" || method === "PATCH") && c.req.raw.body !== null) {
      // Hono keeps what was read: the route parses the same body afterwards.
      if (body === "json") await checkJsonText(c);
      if (body === "form") {
        const fields = await parseFormBody(c);
        for (const value of Object.values(fields).flat()) {
          if (typeof value === "string" && value.includes("\0")) throw refused("Form fields");
        }
      }
    }
    return next();
  };

async function checkJsonText(c: Context): Promise<void> {
  if (!isUtf8(await c.req.arrayBuffer())) {
    throw new AppError("invalid_request", "The request body must be valid UTF-8.");
  }
  const text = await c.req.text();
  if (escapedNul.test(text)) throw refused("JSON strings");
  // Valid UTF-8 cannot encode a surrogate, so only a \u escape can make one: most bodies have
  // none and skip the second parse.
  if (text.includes("\\u") && parsedHoldsLoneSurrogate(text)) {
    throw new AppError("invalid_request", "JSON strings must be valid Unicode: one holds a lone surrogate.");
  }
}

function parsedHoldsLoneSurrogate(text: string): boolean {
  try {
    return containsLoneSurrogate(JSON.parse(text));
  } catch {
    return false; // malformed JSON: the route's own parser answers it
  }
}

/** Whether any string in a parsed value (JSON arguments, say) holds U+0000. */
export function containsNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\0");
  if (Array.isArray(value)) return value.some(containsNul);
  if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) if (key.includes("\0") || containsNul(item)) return true;
  }
  return false;
}

/**
 * Whether any string or key in a parsed value holds a lone UTF-16 surrogate (JSON lets
 * `"\ud800"` through), for a value already known to hold no NUL: such a string has no UTF-8
 * form, so it can be neither hashed canonically nor stored as sent. The remote-tool bounds'
 * storability walk (`jsonShape`) answers it.
 */
export const containsLoneSurrogate = (value: unknown): boolean => jsonShape(value).unstorable;
