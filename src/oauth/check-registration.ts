/**
 * Dynamic client registration is open (MCP clients register themselves), so what a registered
 * client may do is narrowed here, before the provider sees the request: the authorization code
 * flow (with PKCE) and refresh only. Device authorization is the CLI's, which is registered
 * statically. Returns why a request is refused, or undefined to let the provider validate it.
 */
const allowedGrants = new Set(["authorization_code", "refresh_token"]);
const MAX_REDIRECT_URIS = 10;

export function checkRegistration(body: Uint8Array | undefined): string | undefined {
  if (!body) return undefined;
  let metadata: unknown;
  try {
    metadata = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return undefined; // the provider answers malformed bodies itself
  }
  if (typeof metadata !== "object" || metadata === null) return undefined;
  const {
    grant_types: grants,
    response_types: responses,
    redirect_uris: redirects,
  } = metadata as Record<string, unknown>;
  if (Array.isArray(grants) && grants.some((g) => !allowedGrants.has(String(g)))) {
    return "grant_types may only contain authorization_code and refresh_token";
  }
  if (Array.isArray(responses) && responses.some((r) => r !== "code")) {
    return "response_types may only contain code";
  }
  if (Array.isArray(redirects) && redirects.length > MAX_REDIRECT_URIS) {
    return `at most ${MAX_REDIRECT_URIS} redirect_uris`;
  }
  return undefined;
}
