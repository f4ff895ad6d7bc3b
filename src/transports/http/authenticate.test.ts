import { randomUUID } from "node:crypto";
import { describe, expect, newTenant, test } from "../../../test/fixtures.ts";
import { client, listen, problem } from "../../../test/http.ts";
import { generateApiKeySecret } from "../../features/api-keys/key-secret.ts";
import { permissions } from "../../permissions.ts";
import { apiKeys } from "../../platform/db/schema/api-keys.ts";
import { memberships } from "../../platform/db/schema/users.ts";

describe("authentication", () => {
  test("no Authorization header is 401 with a Bearer challenge", async ({ app }) => {
    const res = await app.request("/api/v1/me");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect(await problem(res)).toMatchObject({ code: "unauthorized", status: 401 });
  });

  test("a browser session cookie alone is refused on /api/v1", async ({ app }) => {
    const res = await app.request("/api/v1/me", { headers: { cookie: "patchbay_session=abc" } });
    expect(res.status).toBe(401);
    expect((await problem(res)).detail).toMatch(/cookies are not accepted/);
  });

  test("unknown, malformed and non-Bearer credentials are 401", async ({ app, owner }) => {
    for (const authorization of [
      "Bearer sk_doesnotexist",
      "Bearer",
      `Basic ${Buffer.from("a:b").toString("base64")}`,
      `Bearer ${owner.apiKey} extra`,
      `Bearer ${owner.apiKey.slice(0, -1)}`,
    ]) {
      const res = await app.request("/api/v1/me", { headers: { authorization } });
      expect(res.status, authorization).toBe(401);
    }
  });

  test("/me describes the actor, organisation, role and permissions", async ({ owner }) => {
    const res = await owner.api.get("/me");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      actor: { type: "api_key" },
      user: { id: owner.userId },
      organization: { id: owner.organizationId },
      role: "owner",
      permissions: expect.arrayContaining(["mcp_connections:manage", "mcp_connections:read"]),
    });
  });

  test("a revoked key stops working at once", async ({ app, owner }) => {
    const created = await owner.api.post("/api-keys", { name: "temp", permissions: ["environments:read"] });
    const { apiKey, secret } = (await created.json()) as { apiKey: { id: string }; secret: string };
    const temp = client(app, secret);
    expect((await temp.get("/me")).status).toBe(200);
    expect((await owner.api.delete(`/api-keys/${apiKey.id}`)).status).toBe(204);
    expect((await temp.get("/me")).status).toBe(401);
  });

  test("request ids: a caller's plain id is echoed, a hostile one replaced", async ({ owner, app }) => {
    const echoed = await owner.api.get("/me", { headers: { "x-request-id": "trace-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("trace-123");
    const replaced = await app.request("/api/v1/me", { headers: { "x-request-id": "bad id\twith spaces" } });
    expect(replaced.headers.get("x-request-id")).toMatch(/^req_/);
    expect((await problem(replaced)).requestId).toBe(replaced.headers.get("x-request-id"));
  });

  test("over a real Node server: request ids, ETag and a cached key's second request", async ({
    owner,
    app,
  }) => {
    const server = await listen(app);
    try {
      const get = (path: string, headers: Record<string, string> = {}) =>
        fetch(`${server.url}/api/v1${path}`, {
          headers: { authorization: `Bearer ${owner.apiKey}`, ...headers },
        });
      for (let i = 0; i < 2; i++) {
        const ok = await get(`/environments/${owner.environmentId}`, { "x-request-id": "trace-456" });
        expect(ok.status).toBe(200);
        expect(ok.headers.get("x-request-id")).toBe("trace-456");
        expect(ok.headers.get("etag")).toBe('"1"');
        expect(ok.headers.get("content-type")).toBe("application/json");
        expect(await ok.json()).toMatchObject({ id: owner.environmentId, name: "production" });
      }
      const missing = await get(`/environments/${randomUUID()}`);
      expect(missing.status).toBe(404);
      expect(missing.headers.get("x-request-id")).toMatch(/^req_/);
      expect((await problem(missing)).requestId).toBe(missing.headers.get("x-request-id"));
      const refused = await get("/me", { authorization: "Bearer sk_unknown" });
      expect(refused.status).toBe(401);
      expect(refused.headers.get("x-request-id")).toMatch(/^req_/);
      expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer /);
    } finally {
      await server.close();
    }
  });
});

describe("authorisation and tenancy", () => {
  test("a key without a permission gets 403 naming it", async ({ app, owner }) => {
    const created = await owner.api.post("/api-keys", {
      name: "read-only",
      permissions: ["environments:read"],
    });
    const { secret } = (await created.json()) as { secret: string };
    const readOnly = client(app, secret);
    expect((await readOnly.get("/environments")).status).toBe(200);
    const res = await readOnly.post("/environments", { name: "nope" });
    expect(res.status).toBe(403);
    expect(await problem(res)).toMatchObject({
      code: "forbidden",
      requiredPermission: "environments:manage",
    });
  });

  test("a member (not owner/admin) is refused management even with the permission", async ({
    app,
    deps,
    owner,
  }) => {
    const other = await newTenant(deps, app);
    // Make `other`'s user a plain member of owner's organisation, with an all-permission key.
    await deps.db
      .insert(memberships)
      .values({ organizationId: owner.organizationId, userId: other.userId, role: "member" });
    const key = generateApiKeySecret();
    await deps.db.insert(apiKeys).values({
      id: "key_member",
      organizationId: owner.organizationId,
      userId: other.userId,
      name: "member",
      prefix: key.prefix,
      secretHash: key.hash,
      permissions: [...permissions],
    });
    const member = client(app, key.secret);
    expect((await member.get(`/environments/${owner.environmentId}`)).status).toBe(200);
    const create = await member.post("/environments", { name: "member-made" });
    expect(create.status).toBe(403);
    expect((await problem(create)).code).toBe("forbidden");
    expect((await member.post("/api-keys", { name: "x", permissions: ["environments:read"] })).status).toBe(
      403,
    );
  });

  test("401/403/404 matrix across two organisations", async ({ app, owner, stranger }) => {
    const paths = [`/environments/${stranger.environmentId}`];
    for (const path of paths) {
      expect((await owner.api.get(path)).status).toBe(404);
      expect((await owner.api.patch(path, { name: "x" }, { revision: 1 })).status).toBe(404);
      expect((await app.request(`/api/v1${path}`)).status).toBe(401);
      expect((await stranger.api.get(path)).status).toBe(200);
    }
    const strangerKeys = (await (await stranger.api.get("/api-keys")).json()) as { items: { id: string }[] };
    const foreignKey = strangerKeys.items[0]?.id ?? "";
    expect((await owner.api.delete(`/api-keys/${foreignKey}`)).status).toBe(404);
    const ownerKeys = (await (await owner.api.get("/api-keys")).json()) as { items: { id: string }[] };
    expect(ownerKeys.items.map((k) => k.id)).not.toContain(foreignKey);
    expect((await stranger.api.get("/me")).status).toBe(200);
  });
});
