import { eq, sql } from "drizzle-orm";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { problem } from "../../../test/http.ts";
import {
  authorizeInBrowser,
  deviceTokens,
  formPost,
  pkce,
  registerClient,
  type Tokens,
} from "../../../test/lib/oauth.ts";
import { signedInBrowser } from "../../../test/web.ts";
import type { MemberActor } from "../../actor.ts";
import type { Deps } from "../../deps.ts";
import { removeMember } from "../../features/members/remove-member.ts";
import { CLI_CLIENT_ID } from "../../features/oauth/cli-client.ts";
import { permissions } from "../../permissions.ts";
import { oauthGrants, oauthModels } from "../../platform/db/schema/oauth.ts";
import { memberships } from "../../platform/db/schema/users.ts";

type AppLike = { request(input: string, init?: RequestInit): Response | Promise<Response> };

const CLI_SCOPE = "environments:read mcp_connections:read mcp_connections:manage offline_access";
const jsonRpc = { "content-type": "application/json", accept: "application/json, text/event-stream" };

const newConnection = {
  alias: "x",
  displayName: "X",
  endpointUrl: "https://mcp.example.com/mcp",
  auth: { kind: "none" },
};

const bearer = (token: string, extra: Record<string, string> = {}) => ({
  headers: { authorization: `Bearer ${token}`, ...extra },
});

/** A token for /mcp through the authorization code flow with the given scope. */
async function mcpTokens(
  app: AppLike,
  deps: Deps,
  who: { userId: string; organizationId: string },
  scope: string,
): Promise<Tokens> {
  const base = deps.config.baseUrl;
  const { client_id } = await registerClient(app, deps);
  const browser = await signedInBrowser(app, deps, who.userId);
  const pair = pkce();
  const back = await authorizeInBrowser(
    deps,
    browser,
    `${base}/oauth/authorize?${new URLSearchParams({
      client_id,
      response_type: "code",
      redirect_uri: "http://127.0.0.1:33418/callback",
      scope,
      resource: `${base}/mcp`,
      code_challenge: pair.challenge,
      code_challenge_method: "S256",
    })}`,
    { organizationId: who.organizationId },
  );
  const res = await app.request(
    `${base}/oauth/token`,
    formPost({
      grant_type: "authorization_code",
      client_id,
      code: back.searchParams.get("code") ?? "",
      redirect_uri: "http://127.0.0.1:33418/callback",
      code_verifier: pair.verifier,
    }),
  );
  if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
  return (await res.json()) as Tokens;
}

function mcpCall(app: AppLike, deps: Deps, token: string, method: string, params: Record<string, unknown>) {
  return app.request(`${deps.config.baseUrl}/mcp`, {
    method: "POST",
    ...bearer(token, jsonRpc),
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
}

const refresh = (app: AppLike, deps: Deps, refreshToken: string) =>
  app.request(
    `${deps.config.baseUrl}/oauth/token`,
    formPost({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: CLI_CLIENT_ID }),
  );

describe("device-flow tokens on /api/v1", () => {
  test("act as the person in the organisation chosen, with the scopes granted", async ({
    app,
    deps,
    owner,
  }) => {
    const tokens = await deviceTokens(app, deps, owner, { scope: CLI_SCOPE });
    expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: 3600 });
    expect(tokens.scope?.split(" ").sort()).toEqual(
      ["environments:read", "mcp_connections:manage", "mcp_connections:read"].sort(),
    );
    const me = await app.request("/api/v1/me", bearer(tokens.access_token));
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({
      actor: { type: "oauth_token", id: expect.stringMatching(/^oag_/), clientId: CLI_CLIENT_ID },
      user: { id: owner.userId },
      organization: { id: owner.organizationId },
      role: "owner",
      permissions: ["environments:read", "mcp_connections:manage", "mcp_connections:read"],
    });
    const list = await app.request(
      `/api/v1/environments/${owner.environmentId}/mcp-connections`,
      bearer(tokens.access_token),
    );
    expect(list.status).toBe(200);
  });

  test("nothing of the tokens is stored in a usable form", async ({ app, deps, owner }) => {
    const tokens = await deviceTokens(app, deps, owner, { scope: CLI_SCOPE });
    const rows = JSON.stringify(await deps.db.select().from(oauthModels));
    expect(rows).not.toContain(tokens.access_token);
    expect(rows).not.toContain(tokens.refresh_token);
  });

  test("a token without the MCP scopes is 403 insufficient_scope, with the challenge and advice to log in again", async ({
    app,
    deps,
    owner,
  }) => {
    // A profile from before the MCP scopes existed.
    const old = await deviceTokens(app, deps, owner, { scope: "environments:read offline_access" });
    expect((await app.request("/api/v1/environments", bearer(old.access_token))).status).toBe(200);
    const res = await app.request(
      `/api/v1/environments/${owner.environmentId}/mcp-connections`,
      bearer(old.access_token),
    );
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toBe(
      `Bearer realm="patchbay", error="insufficient_scope", scope="mcp_connections:read", resource_metadata="${deps.config.baseUrl}/.well-known/oauth-protected-resource/api/v1"`,
    );
    const body = await problem(res);
    expect(body).toMatchObject({ code: "insufficient_scope", scope: "mcp_connections:read" });
    expect(body.detail).toMatch(/Log in again.*patchbay login/);
  });

  test("another organisation's environment is 404, as for keys", async ({ app, deps, owner, stranger }) => {
    const tokens = await deviceTokens(app, deps, owner, { scope: CLI_SCOPE });
    const res = await app.request(
      `/api/v1/environments/${stranger.environmentId}/mcp-connections`,
      bearer(tokens.access_token),
    );
    expect(res.status).toBe(404);
    const create = await app.request(`/api/v1/environments/${stranger.environmentId}/mcp-connections`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        "content-type": "application/json",
        "idempotency-key": "k1",
      },
      body: JSON.stringify(newConnection),
    });
    expect(create.status).toBe(404);
  });

  test("a token cannot be had for an organisation the person is not in", async ({
    app,
    deps,
    owner,
    stranger,
  }) => {
    await expect(
      deviceTokens(
        app,
        deps,
        { userId: owner.userId, organizationId: stranger.organizationId },
        { scope: CLI_SCOPE },
      ),
    ).rejects.toThrow(/consent|device approval|no redirect|not a consent page|404/i);
  });

  test("a member's token may read but never manage (the role is checked live)", async ({
    app,
    deps,
    owner,
    stranger,
  }) => {
    await deps.db
      .insert(memberships)
      .values({ organizationId: owner.organizationId, userId: stranger.userId, role: "member" });
    const tokens = await deviceTokens(
      app,
      deps,
      { userId: stranger.userId, organizationId: owner.organizationId },
      { scope: CLI_SCOPE },
    );
    const path = `/api/v1/environments/${owner.environmentId}/mcp-connections`;
    expect((await app.request(path, bearer(tokens.access_token))).status).toBe(403);
    const res = await app.request(path, {
      method: "POST",
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        "content-type": "application/json",
        "idempotency-key": "k",
      },
      body: JSON.stringify(newConnection),
    });
    expect(res.status).toBe(403);
    expect((await problem(res)).code).toBe("forbidden");
  });

  test("removing the member stops their tokens at once, and re-inviting does not revive them", async ({
    app,
    deps,
    owner,
    stranger,
  }) => {
    await deps.db
      .insert(memberships)
      .values({ organizationId: owner.organizationId, userId: stranger.userId, role: "admin" });
    const tokens = await deviceTokens(
      app,
      deps,
      { userId: stranger.userId, organizationId: owner.organizationId },
      { scope: CLI_SCOPE },
    );
    expect((await app.request("/api/v1/me", bearer(tokens.access_token))).status).toBe(200);
    const ownerActor: MemberActor = {
      type: "web_session",
      id: "wss_test",
      userId: owner.userId,
      organizationId: owner.organizationId,
      role: "owner",
      permissions: new Set(permissions),
    };
    await removeMember({
      ctx: { deps, actor: ownerActor, channel: "rest", requestId: "req_t" },
      input: { userId: stranger.userId },
    });
    expect((await app.request("/api/v1/me", bearer(tokens.access_token))).status).toBe(401);
    await deps.db
      .insert(memberships)
      .values({ organizationId: owner.organizationId, userId: stranger.userId, role: "admin" });
    expect((await app.request("/api/v1/me", bearer(tokens.access_token))).status).toBe(401);
    expect((await refresh(app, deps, tokens.refresh_token ?? "")).status).toBe(400);
  });

  test("an expired access token is refused", async ({ app, deps, owner }) => {
    const tokens = await deviceTokens(app, deps, owner, { scope: CLI_SCOPE });
    await deps.db
      .update(oauthModels)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(oauthModels.model, "AccessToken"));
    expect((await app.request("/api/v1/me", bearer(tokens.access_token))).status).toBe(401);
  });
});

describe("audience binding (RFC 8707)", () => {
  test("a /api/v1 token is refused on /mcp, and a /mcp token on /api/v1", async ({ app, deps, owner }) => {
    const base = deps.config.baseUrl;
    const api = await deviceTokens(app, deps, owner, { scope: CLI_SCOPE });
    const onMcp = await mcpCall(app, deps, api.access_token, "tools/list", {});
    expect(onMcp.status).toBe(401);
    expect(onMcp.headers.get("www-authenticate")).toBe(
      `Bearer error="invalid_token", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect((await problem(onMcp)).detail).toContain(`issued for ${base}/api/v1, not ${base}/mcp`);

    const mcp = await mcpTokens(app, deps, owner, "patchbay.mcp.read patchbay.mcp.write");
    expect((await mcpCall(app, deps, mcp.access_token, "tools/list", {})).status).toBe(200);
    const onApi = await app.request("/api/v1/me", bearer(mcp.access_token));
    expect(onApi.status).toBe(401);
    expect(onApi.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect((await problem(onApi)).detail).toContain(`issued for ${base}/mcp, not ${base}/api/v1`);
  });

  test("a token cannot be asked for a resource patchbay does not serve", async ({ app, deps }) => {
    const res = await app.request(
      `${deps.config.baseUrl}/oauth/device_authorization`,
      formPost({ client_id: CLI_CLIENT_ID, scope: CLI_SCOPE, resource: "https://elsewhere.example/api" }),
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_target" });
  });
});

describe("MCP scopes", () => {
  test("read scope: read tools work, a write tool is a 403 scope challenge for patchbay.mcp.write", async ({
    app,
    deps,
    owner,
  }) => {
    const base = deps.config.baseUrl;
    const read = await mcpTokens(app, deps, owner, "patchbay.mcp.read");
    const listed = await mcpCall(app, deps, read.access_token, "tools/call", {
      name: "list_mcp_connections",
      arguments: { environmentId: owner.environmentId },
    });
    expect(listed.status).toBe(200);
    const write = await mcpCall(app, deps, read.access_token, "tools/call", {
      name: "create_mcp_connection",
      arguments: {
        environmentId: owner.environmentId,
        alias: "x",
        displayName: "X",
        endpointUrl: "https://mcp.example.com/mcp",
        auth: { kind: "none" },
      },
    });
    expect(write.status).toBe(403);
    expect(write.headers.get("www-authenticate")).toBe(
      `Bearer error="insufficient_scope", scope="patchbay.mcp.write", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(await problem(write)).toMatchObject({ code: "insufficient_scope", scope: "patchbay.mcp.write" });
  });

  test("a /mcp token with neither MCP scope is a 403 scope challenge for patchbay.mcp.read", async ({
    app,
    deps,
    owner,
  }) => {
    // Consent never issues such a token (it would grant nothing); one stored with no scope left
    // stands for whatever a future scope change could leave behind.
    const tokens = await mcpTokens(app, deps, owner, "patchbay.mcp.read");
    await deps.db
      .update(oauthModels)
      .set({ payload: sql`jsonb_set(${oauthModels.payload}, '{scope}', '""')` })
      .where(eq(oauthModels.model, "AccessToken"));
    const res = await mcpCall(app, deps, tokens.access_token, "tools/list", {});
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toContain(
      'error="insufficient_scope", scope="patchbay.mcp.read"',
    );
  });

  test("write scope without owner/admin role is forbidden by the tool, not by the scope", async ({
    app,
    deps,
    owner,
    stranger,
  }) => {
    await deps.db
      .insert(memberships)
      .values({ organizationId: owner.organizationId, userId: stranger.userId, role: "member" });
    const tokens = await mcpTokens(
      app,
      deps,
      { userId: stranger.userId, organizationId: owner.organizationId },
      "patchbay.mcp.write",
    );
    const res = await mcpCall(app, deps, tokens.access_token, "tools/call", {
      name: "list_mcp_connections",
      arguments: { environmentId: owner.environmentId },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      result: { isError: boolean; _meta: Record<string, { code: string }> };
    };
    expect(body.result.isError).toBe(true);
    expect(body.result._meta["patchbay/error"]?.code).toBe("forbidden");
  });
});

describe("refresh and revocation", () => {
  test("refresh rotates; a refresh token used twice ends the whole grant", async ({ app, deps, owner }) => {
    const first = await deviceTokens(app, deps, owner, { scope: CLI_SCOPE });
    const res = await refresh(app, deps, first.refresh_token ?? "");
    expect(res.status).toBe(200);
    const second = (await res.json()) as Tokens;
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await app.request("/api/v1/me", bearer(second.access_token))).status).toBe(200);

    // Someone replays the old refresh token: refused, and everything of the grant dies with it.
    const replay = await refresh(app, deps, first.refresh_token ?? "");
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: "invalid_grant" });
    expect((await app.request("/api/v1/me", bearer(second.access_token))).status).toBe(401);
    expect((await refresh(app, deps, second.refresh_token ?? "")).status).toBe(400);
  });

  test("another client cannot revoke the CLI's login (and learns nothing trying)", async ({
    app,
    deps,
    owner,
  }) => {
    const tokens = await deviceTokens(app, deps, owner, { scope: CLI_SCOPE });
    const { client_id } = await registerClient(app, deps);
    const res = await app.request(
      `${deps.config.baseUrl}/oauth/revoke`,
      formPost({ token: tokens.refresh_token ?? "", token_type_hint: "refresh_token", client_id }),
    );
    expect(res.status).toBe(200);
    expect((await app.request("/api/v1/me", bearer(tokens.access_token))).status).toBe(200);
    expect((await refresh(app, deps, tokens.refresh_token ?? "")).status).toBe(200);
  });

  test("revoking the refresh token (logout) ends its access tokens too", async ({ app, deps, owner }) => {
    const tokens = await deviceTokens(app, deps, owner, { scope: CLI_SCOPE });
    const revoked = await app.request(
      `${deps.config.baseUrl}/oauth/revoke`,
      formPost({
        token: tokens.refresh_token ?? "",
        token_type_hint: "refresh_token",
        client_id: CLI_CLIENT_ID,
      }),
    );
    expect(revoked.status).toBe(200);
    expect((await app.request("/api/v1/me", bearer(tokens.access_token))).status).toBe(401);
    expect((await refresh(app, deps, tokens.refresh_token ?? "")).status).toBe(400);
    const [binding] = await deps.db.select().from(oauthGrants).where(eq(oauthGrants.userId, owner.userId));
    const left = await deps.db
      .select()
      .from(oauthModels)
      .where(eq(oauthModels.grantId, binding?.grantId ?? "none"));
    expect(left).toEqual([]);
  });
});
