import { eq } from "drizzle-orm";
import Provider, { errors, type KoaContextWithOIDC, type OidcClient } from "oidc-provider";
import type { Deps } from "../../deps.ts";
import { createOAuthAdapter } from "../../features/oauth/adapter.ts";
import { CLI_CLIENT_ID, cliClient } from "../../features/oauth/cli-client.ts";
import { cookieKeys, signingKeys } from "../../features/oauth/signing-keys.ts";
import { resourceNamed, resourceUrl, scopesOf } from "../../oauth-resources.ts";
import { users } from "../../platform/db/schema/users.ts";
import { interactionPath, oauthRoutes, providerCookies } from "./endpoints.ts";
import { type OAuthPages, providerSecurityHeaders } from "./pages/provider-pages.ts";

/** Lifetimes, in seconds (docs/oauth.md). */
const oauthTtl = {
  AccessToken: 60 * 60,
  AuthorizationCode: 60,
  DeviceCode: 10 * 60,
  Interaction: 10 * 60,
  /** The provider's own session is only a vehicle through one flow (see docs/oauth.md). */
  Session: 60 * 60,
  IdToken: 60 * 60,
  RefreshToken: 30 * 24 * 60 * 60,
  Grant: 90 * 24 * 60 * 60,
} as const;

/**
 * The OAuth 2.1 authorization server: oidc-provider configured for patchbay (docs/oauth.md):
 * device authorization for the CLI, code + PKCE with dynamic registration for MCP clients,
 * refresh, revocation, resource indicators naming `/api/v1` or `/mcp` as each token's audience.
 */
export function createOAuthProvider(deps: Deps, pages: OAuthPages): Provider {
  const base = deps.config.baseUrl;
  const provider = new Provider(base, {
    adapter: (model: string) => createOAuthAdapter(deps.db, model),
    clients: [cliClient()],
    clientDefaults: {
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      id_token_signed_response_alg: "EdDSA",
    },
    async findAccount(_ctx: KoaContextWithOIDC, sub: string) {
      const [user] = await deps.db.select({ id: users.id }).from(users).where(eq(users.id, sub)).limit(1);
      return user && { accountId: user.id, claims: () => ({ sub: user.id }) };
    },
    jwks: { keys: signingKeys(deps.keyring) },
    enabledJWA: { idTokenSigningAlgValues: ["EdDSA"] },
    cookies: {
      keys: cookieKeys(deps.keyring),
      names: providerCookies,
      long: { httpOnly: true, sameSite: "lax" },
      short: { httpOnly: true, sameSite: "lax" },
    },
    routes: oauthRoutes,
    scopes: ["openid", "offline_access"],
    // OAuth 2.1: the authorization code flow only (no implicit, no hybrid).
    responseTypes: ["code"],
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      introspection: { enabled: false },
      clientCredentials: { enabled: false },
      // Sender-constrained tokens would need proof checks at /api/v1 and /mcp; bearer only.
      dPoP: { enabled: false },
      revocation: {
        enabled: true,
        // A client revokes only its own tokens; a public client asking for another's is told
        // nothing (200, nothing revoked), so it cannot probe which tokens exist.
        async allowedPolicy(_ctx: KoaContextWithOIDC, client: OidcClient, token: { clientId?: string }) {
          if (token.clientId === client.clientId) return true;
          if (client.clientAuthMethod === "none") return false;
          throw new errors.InvalidRequest("client is not authorized to revoke the presented token");
        },
      },
      registration: { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: false },
      deviceFlow: {
        enabled: true,
        charset: "base-20",
        mask: "****-****",
        userCodeInputSource: pages.userCodeInput,
        userCodeConfirmSource: pages.userCodeConfirm,
        successSource: pages.deviceSuccess,
      },
      resourceIndicators: {
        enabled: true,
        // Without `resource`, the CLI means the REST API and every other client the MCP server.
        async defaultResource(_ctx: KoaContextWithOIDC, client: OidcClient, oneOf?: string[]) {
          if (oneOf) return oneOf.length === 1 ? oneOf[0] : oneOf;
          return resourceUrl(base, client.clientId === CLI_CLIENT_ID ? "api" : "mcp");
        },
        async getResourceServerInfo(_ctx: KoaContextWithOIDC, indicator: string) {
          const name = resourceNamed(base, indicator);
          if (!name) {
            const known = `${resourceUrl(base, "api")} or ${resourceUrl(base, "mcp")}`;
            throw new errors.InvalidTarget(`unknown resource; use ${known}`);
          }
          const scope = scopesOf(name).join(" ");
          return {
            scope,
            audience: indicator,
            accessTokenTTL: oauthTtl.AccessToken,
            accessTokenFormat: "opaque",
          };
        },
        async useGrantedResource() {
          return true;
        },
      },
    },
    pkce: { required: () => true },
    ttl: oauthTtl,
    interactions: {
      url: (_ctx: KoaContextWithOIDC, interaction: { uid: string }) => interactionPath(interaction.uid),
    },
    // Every authorization goes through consent: a grant is never reused from a remembered session,
    // because each grant names the organisation the person picked for it.
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    // Every client allowed the grant gets a refresh token; tokens never die with the provider's
    // short session (it only carries one flow).
    async issueRefreshToken(_ctx: KoaContextWithOIDC, client: OidcClient) {
      return client.grantTypeAllowed("refresh_token");
    },
    async expiresWithSession() {
      return false;
    },
    clientBasedCORS: (_ctx: KoaContextWithOIDC, origin: string, client: OidcClient) =>
      origin !== "null" && client.redirectUris.some((uri) => URL.parse(uri)?.origin === origin),
    renderError: pages.renderError,
  });
  provider.proxy = true;
  provider.use(providerSecurityHeaders);
  provider.on("server_error", (...args: unknown[]) =>
    deps.logger.error({ err: args[1] }, "OAuth authorization server error"),
  );
  return provider;
}
