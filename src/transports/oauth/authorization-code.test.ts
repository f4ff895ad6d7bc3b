import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { eq } from "drizzle-orm";
import { describe, expect, test } from "../../../test/fixtures.ts";
import {
  authorizeInBrowser,
  consentAction,
  follow,
  formPost,
  pkce,
  registerClient,
} from "../../../test/lib/oauth.ts";
import { signedInBrowser, webClient } from "../../../test/web.ts";
import type { Deps } from "../../deps.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";
import { oauthGrants } from "../../platform/db/schema/oauth.ts";

const REDIRECT = "http://127.0.0.1:33418/callback";

/** An MCP client application's OAuth state, as the SDK's provider interface wants it kept. */
class MemoryOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "SDK test client",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

type AppLike = { request(input: string, init?: RequestInit): Response | Promise<Response> };
const fetchVia = (app: AppLike) => async (url: string | URL, init?: RequestInit) =>
  app.request(String(url), init);

/** Starts an authorization request of a registered public client. */
function authorizeUrl(deps: Deps, clientId: string, params: Record<string, string>): string {
  const base = deps.config.baseUrl;
  return `${base}/oauth/authorize?${new URLSearchParams({
    client_id: clientId,
    response_type: "code",
    redirect_uri: REDIRECT,
    scope: "patchbay.mcp.read",
    resource: `${base}/mcp`,
    state: "s1",
    ...params,
  })}`;
}

describe("MCP clients: dynamic registration, authorization code + PKCE (the official SDK)", () => {
  test("the SDK client discovers, registers, is authorized in the browser and manages connections on /mcp", async ({
    app,
    deps,
    owner,
  }) => {
    const base = deps.config.baseUrl;
    const provider = new MemoryOAuthProvider();
    const serverUrl = new URL(`${base}/mcp`);
    const fetch = fetchVia(app);
    const connect = async () => {
      const client = new Client({ name: "oauth-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider, fetch }));
      return client;
    };
    // No token: /mcp answers 401, the SDK follows resource_metadata to patchbay's authorization
    // server, registers itself and hands the person an authorization URL.
    await expect(connect()).rejects.toThrow(/Unauthorized/);
    expect(provider.client?.client_id).toBeTruthy();
    const url = provider.authorizationUrl;
    expect(url?.origin).toBe(base);
    expect(url?.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url?.searchParams.get("resource")).toBe(`${base}/mcp`);
    expect(url?.searchParams.get("scope")).toBe("patchbay.mcp.read patchbay.mcp.write");

    const browser = await signedInBrowser(app, deps, owner.userId);
    const back = await authorizeInBrowser(deps, browser, String(url), {
      organizationId: owner.organizationId,
    });
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get("iss")).toBe(base);
    const code = back.searchParams.get("code") ?? "";

    const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider, fetch });
    await transport.finishAuth(code);
    expect(provider.saved).toMatchObject({
      token_type: "Bearer",
      scope: "patchbay.mcp.read patchbay.mcp.write",
    });
    expect(provider.saved?.refresh_token).toBeTruthy();

    const client = await connect();
    expect((await client.listTools()).tools).toHaveLength(11);
    const created = await client.callTool({
      name: "create_mcp_connection",
      arguments: {
        environmentId: owner.environmentId,
        alias: "runbooks",
        displayName: "Runbooks",
        endpointUrl: "https://mcp.example.com/mcp",
        auth: { kind: "none" },
      },
    });
    expect(created.isError).toBeFalsy();
    const listed = await client.callTool({
      name: "list_mcp_connections",
      arguments: { environmentId: owner.environmentId },
    });
    expect(JSON.stringify(listed.structuredContent)).toContain("runbooks");
    await client.close();

    // The grant names the organisation chosen; its creation and the change are audited as the token.
    const [grant] = await deps.db.select().from(oauthGrants).where(eq(oauthGrants.userId, owner.userId));
    expect(grant).toMatchObject({
      organizationId: owner.organizationId,
      clientId: provider.client?.client_id,
    });
    const audit = await deps.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.organizationId, owner.organizationId));
    expect(audit.map((a) => [a.action, a.actorType])).toEqual(
      expect.arrayContaining([
        ["oauth.grant.created", "web_session"],
        ["mcp_connection.created", "oauth_token"],
      ]),
    );
  });

  test("PKCE is required, S256 only, and the verifier must match", async ({ app, deps, owner }) => {
    const base = deps.config.baseUrl;
    const { client_id } = await registerClient(app, deps);
    const browser = await signedInBrowser(app, deps, owner.userId);

    // No code_challenge: refused before anyone is asked, back to the client with an error.
    const missing = await browser.get(authorizeUrl(deps, client_id, {}).slice(base.length));
    const missingBack = new URL(missing.headers.get("location") ?? "");
    expect(missingBack.searchParams.get("error")).toBe("invalid_request");
    expect(missingBack.searchParams.get("error_description")).toMatch(/PKCE/);

    const { challenge } = pkce();
    const plain = await browser.get(
      authorizeUrl(deps, client_id, { code_challenge: challenge, code_challenge_method: "plain" }).slice(
        base.length,
      ),
    );
    expect(new URL(plain.headers.get("location") ?? "").searchParams.get("error")).toBe("invalid_request");

    const pair = pkce();
    const back = await authorizeInBrowser(
      deps,
      browser,
      authorizeUrl(deps, client_id, { code_challenge: pair.challenge, code_challenge_method: "S256" }),
      { organizationId: owner.organizationId },
    );
    const code = back.searchParams.get("code") ?? "";
    const exchange = (verifier?: string) =>
      app.request(
        `${base}/oauth/token`,
        formPost({
          grant_type: "authorization_code",
          client_id,
          code,
          redirect_uri: REDIRECT,
          ...(verifier === undefined ? {} : { code_verifier: verifier }),
        }),
      );
    const noVerifier = await exchange();
    expect(noVerifier.status).toBe(400);
    expect(((await noVerifier.json()) as { error: string }).error).toMatch(/invalid_(grant|request)/);
    const wrong = await exchange(pkce().verifier);
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: "invalid_grant" });
    // Only the verifier was wrong: the one that matches the challenge redeems the code.
    const right = await exchange(pair.verifier);
    expect(right.status).toBe(200);
  });

  test("the right verifier redeems the code once, for the resource asked for", async ({
    app,
    deps,
    owner,
  }) => {
    const base = deps.config.baseUrl;
    const { client_id } = await registerClient(app, deps);
    const browser = await signedInBrowser(app, deps, owner.userId);
    const pair = pkce();
    const back = await authorizeInBrowser(
      deps,
      browser,
      authorizeUrl(deps, client_id, { code_challenge: pair.challenge, code_challenge_method: "S256" }),
      { organizationId: owner.organizationId },
    );
    const body = {
      grant_type: "authorization_code",
      client_id,
      code: back.searchParams.get("code") ?? "",
      redirect_uri: REDIRECT,
      code_verifier: pair.verifier,
    };
    const first = await app.request(`${base}/oauth/token`, formPost(body));
    expect(first.status).toBe(200);
    const tokens = (await first.json()) as { access_token: string; scope: string };
    expect(tokens.scope).toBe("patchbay.mcp.read");
    const again = await app.request(`${base}/oauth/token`, formPost(body));
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: "invalid_grant" });
  });

  test("denying at consent sends the client access_denied and grants nothing", async ({
    app,
    deps,
    owner,
  }) => {
    const { client_id } = await registerClient(app, deps);
    const browser = await signedInBrowser(app, deps, owner.userId);
    const { challenge } = pkce();
    const back = await authorizeInBrowser(
      deps,
      browser,
      authorizeUrl(deps, client_id, { code_challenge: challenge, code_challenge_method: "S256" }),
      { organizationId: owner.organizationId, decision: "deny" },
    );
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("code")).toBeNull();
    expect(await deps.db.select().from(oauthGrants).where(eq(oauthGrants.userId, owner.userId))).toEqual([]);
  });

  test("signed out, the authorization sends the person to /login and back; consent lets them post on to the client", async ({
    app,
    deps,
    owner,
  }) => {
    const { client_id } = await registerClient(app, deps);
    const signedIn = await signedInBrowser(app, deps, owner.userId);
    const browser = webClient(app, deps.config.baseUrl);
    const { challenge } = pkce();
    const url = authorizeUrl(deps, client_id, { code_challenge: challenge, code_challenge_method: "S256" });
    const landed = await follow(deps, browser, await browser.get(url.slice(deps.config.baseUrl.length)));
    // follow() went on to the sign-in page, which will send the person back to the interaction.
    expect(landed.status).toBe(200);
    const login = await landed.text();
    expect(login).toContain('<form method="post" action="/login"');
    expect(login).toMatch(/name="next" value="\/oauth\/interaction\/[A-Za-z0-9_-]+"/);

    // Signed in, the consent page allows its form (and the redirects after it) to reach the client.
    const first = await signedIn.get(url.slice(deps.config.baseUrl.length));
    const consent = await follow(deps, signedIn, first);
    const page = await consent.text();
    consentAction(page);
    expect(page).toContain("Test MCP client");
    expect(page).toContain("a name the application gave itself");
    expect(consent.headers.get("content-security-policy")).toContain(
      "form-action 'self' http://127.0.0.1:33418",
    );
  });

  test("registration is open but narrowed to the authorization code flow", async ({ app, deps }) => {
    const refused = await app.request(`${deps.config.baseUrl}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        redirect_uris: [REDIRECT],
        grant_types: ["urn:ietf:params:oauth:grant-type:device_code"],
        token_endpoint_auth_method: "none",
      }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: "invalid_client_metadata" });
    const registered = await registerClient(app, deps, { client_name: "Fine" });
    expect(registered.client_id).toBeTruthy();
  });

  test("a registration with a NUL character or a lone surrogate is refused as client metadata, not failed in the database", async ({
    app,
    deps,
    logs,
  }) => {
    for (const metadata of [
      { redirect_uris: [REDIRECT], client_name: "a\u0000" },
      { redirect_uris: [`${REDIRECT}\u0000`] },
      { redirect_uris: [REDIRECT], client_name: "half \ud800" },
    ]) {
      const res = await app.request(`${deps.config.baseUrl}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(metadata),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_client_metadata" });
    }
    expect(logs.text()).not.toContain("OAuth authorization server error");
  });
});
