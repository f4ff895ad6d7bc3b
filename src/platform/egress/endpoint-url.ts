import { AppError } from "../../errors.ts";
import { type EgressPolicy, strictEgressPolicy } from "./address-policy.ts";
import { bareHost, effectivePort, refuseTarget } from "./target-rules.ts";

const MAX_LENGTH = 2048;

// Control, format (zero-width, bidi, soft hyphen) and separator characters: the WHATWG
// parser silently strips or maps some of them, so what a user sees would differ from what
// is dialled. Backslash is read as "/" by the parser. Refuse them all before parsing.
const HIDDEN = /[\p{Cc}\p{Cf}\p{Z}\\]/u;

const invalid = (rule: string, message: string) =>
  new AppError("invalid_endpoint_url", `endpointUrl: ${message}`, { rule });

/**
 * Checks a customer MCP endpoint URL (connection create/update) and returns its canonical
 * form: `https://host[:port]/path`, lowercase punycode host without trailing dot, no :443.
 * Throws `invalid_endpoint_url` with a stable `details.rule`. No DNS here: the addresses
 * behind a name are checked when the egress dials (see egress-fetch.ts).
 */
export function validateEndpointUrl(
  raw: string,
  policy: EgressPolicy = strictEgressPolicy(),
): { url: URL; origin: string; canonical: string } {
  if (raw.length > MAX_LENGTH) throw invalid("too_long", `longer than ${MAX_LENGTH} characters`);
  if (HIDDEN.test(raw)) throw invalid("characters", "contains whitespace, control characters or a backslash");
  // Also refuses "https:host" and "https:/host", which the parser would quietly repair.
  if (!/^https:\/\//i.test(raw)) throw invalid("scheme", "must start with https://");
  const authority = raw.slice("https://".length).split(/[/?#]/, 1)[0] ?? "";
  if (authority === "") throw invalid("syntax", "missing host");
  // The parser drops an empty userinfo ("https://@host"); the raw authority still shows it.
  if (authority.includes("@")) throw invalid("userinfo", "credentials in the URL are not allowed");
  const query = raw.indexOf("?");
  const fragment = raw.indexOf("#");
  if (fragment !== -1 && (query === -1 || fragment < query))
    throw invalid("fragment", "fragments are not allowed");
  if (query !== -1) throw invalid("query", "query strings are not allowed");

  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw invalid("syntax", "not a valid URL");
  }
  const refusal = refuseTarget(parsed, policy);
  if (refusal) throw invalid(refusal.rule, refusal.message);

  const host = parsed.hostname.startsWith("[") ? parsed.hostname : bareHost(parsed);
  const port = effectivePort(parsed);
  const origin = `https://${host}${port === 443 ? "" : `:${port}`}`;
  const canonical = `${origin}${parsed.pathname}`;
  return { url: new URL(canonical), origin, canonical };
}
