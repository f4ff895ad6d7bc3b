import { containsLoneSurrogate, containsNul } from "../http/unstorable-text.ts";

/**
 * Registration is open (MCP clients register themselves), so a registered client is narrowed here
 * to the code flow and refresh (device authorization is the static CLI client's). A requested
 * `scope` is dropped (RFC 7591 §2): patchbay's scopes are chosen per authorization, at consent.
 */
const allowedGrants = new Set(["authorization_code", "refresh_token"]);
const MAX_REDIRECT_URIS = 10;

type RegistrationCheck = { refusal: string } | { body: Uint8Array | undefined };

export function checkRegistration(body: Uint8Array | undefined): RegistrationCheck {
  if (!body) return { body };
  let metadata: unknown;
  try {
    metadata = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return { body }; // the provider answers malformed bodies itself
  }
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) return { body };
  const { scope: _scope, ...kept } = metadata as Record<string, unknown>;
  const { grant_types: grants, response_types: responses, redirect_uris: redirects } = kept;
  if (Array.isArray(grants) && grants.some((g) => !allowedGrants.has(String(g)))) {
    return { refusal: "grant_types may only contain authorization_code and refresh_token" };
  }
  if (Array.isArray(responses) && responses.some((r) => r !== "code")) {
    return { refusal: "response_types may only contain code" };
  }
  if (Array.isArray(redirects) && redirects.length > MAX_REDIRECT_URIS) {
    return { refusal: `at most ${MAX_REDIRECT_URIS} redirect_uris` };
  }
  // PostgreSQL's jsonb holds neither U+0000 nor a lone surrogate: the provider would store the
  // client and fail (a 500).
  if (containsNul(kept)) return { refusal: "client metadata must not contain NUL characters" };
  if (containsLoneSurrogate(kept)) return { refusal: "client metadata must be valid Unicode" };
  return { body: new TextEncoder().encode(JSON.stringify(kept)) };
}
