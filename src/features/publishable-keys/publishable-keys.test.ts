import { eq } from "drizzle-orm";
import { describe, expect, newTenant, test } from "../../../test/fixtures.ts";
import { client, problem } from "../../../test/http.ts";
import { permissions } from "../../permissions.ts";
import { apiKeys } from "../../platform/db/schema/api-keys.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";
import { publishableKeys } from "../../platform/db/schema/publishable-keys.ts";
import { memberships } from "../../platform/db/schema/users.ts";
import { generateApiKeySecret } from "../api-keys/key-secret.ts";
import { MAX_ACTIVE_PUBLISHABLE_KEYS } from "./create-publishable-key.ts";

type Created = { publishableKey: { id: string; prefix: string; environmentId: string }; key: string };
type Page = {
  items: { id: string; name: string; revokedAt: string | null; lastUsedAt: string | null }[];
  nextCursor: string | null;
};

const path = (environmentId: string) => `/environments/${environmentId}/publishable-keys`;
const traces = '{"resourceSpans":[]}';
const ingest = (app: { request(p: string, i: RequestInit): Response | Promise<Response> }, key: string) =>
  app.request("/v1/traces", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: traces,
  });

describe("publishable keys", () => {
  test("create shows the key once and stores only its hash; the list never shows it", async ({
    app,
    owner,
    deps,
  }) => {
    const res = await owner.api.post(
      path(owner.environmentId),
      { name: "web frontend" },
      { idempotencyKey: false },
    );
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const created = (await res.json()) as Created;
    expect(created.key).toMatch(/^pk_[0-9a-z]{39}$/);
    expect(created.publishableKey).toMatchObject({
      environmentId: owner.environmentId,
      name: "web frontend",
    });
    expect(created.key.startsWith(created.publishableKey.prefix)).toBe(true);
    expect(created.publishableKey.id).toMatch(/^pbk_/);

    const stored = await deps.db.select().from(publishableKeys);
    expect(JSON.stringify(stored)).not.toContain(created.key);
    const list = await owner.api.get(path(owner.environmentId));
    const text = await list.text();
    expect(text).not.toContain(created.key);
    expect((JSON.parse(text) as Page).items.map((k) => k.id)).toEqual([created.publishableKey.id]);
    const audits = await deps.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.targetId, created.publishableKey.id));
    expect(audits.map((a) => a.action)).toEqual(["publishable_key.created"]);
    expect(JSON.stringify(audits)).not.toContain(created.key);

    expect((await ingest(app, created.key)).status).toBe(200);
    await expect
      .poll(async () => (await deps.db.select().from(publishableKeys))[0]?.lastUsedAt)
      .not.toBeNull();
  });

  test("revoking refuses the very next telemetry request; revoking again is fine; unknown ids 404", async ({
    app,
    owner,
  }) => {
    const created = (await (
      await owner.api.post(path(owner.environmentId), { name: "temp" })
    ).json()) as Created;
    expect((await ingest(app, created.key)).status).toBe(200);
    const keyPath = `${path(owner.environmentId)}/${created.publishableKey.id}`;
    expect((await owner.api.delete(keyPath)).status).toBe(204);
    expect((await ingest(app, created.key)).status).toBe(401);
    expect((await owner.api.delete(keyPath)).status).toBe(204);
    expect((await owner.api.delete(`${path(owner.environmentId)}/pbk_unknown`)).status).toBe(404);
    const listed = (await (await owner.api.get(path(owner.environmentId))).json()) as Page;
    expect(listed.items[0]?.revokedAt).not.toBeNull();
  });

  test("pages are keyset-paginated", async ({ owner }) => {
    for (const name of ["a", "b", "c"]) await owner.api.post(path(owner.environmentId), { name });
    const first = (await (await owner.api.get(`${path(owner.environmentId)}?pageSize=2`)).json()) as Page;
    expect(first.items.map((k) => k.name)).toEqual(["a", "b"]);
    const second = (await (
      await owner.api.get(`${path(owner.environmentId)}?pageSize=2&cursor=${first.nextCursor}`)
    ).json()) as Page;
    expect(second.items.map((k) => k.name)).toEqual(["c"]);
    expect(second.nextCursor).toBeNull();
  });

  test("bad bodies are 400; more than the limit of active keys is 409", async ({ owner }) => {
    for (const body of [{}, { name: "" }, { name: "x", extra: 1 }, { name: "line\nbreak" }]) {
      const res = await owner.api.post(path(owner.environmentId), body);
      expect(res.status).toBe(400);
      expect((await problem(res)).code).toBe("invalid_request");
    }
    for (let i = 0; i < MAX_ACTIVE_PUBLISHABLE_KEYS; i++) {
      expect((await owner.api.post(path(owner.environmentId), { name: `k${i}` })).status).toBe(201);
    }
    const over = await owner.api.post(path(owner.environmentId), { name: "one too many" });
    expect(over.status).toBe(409);
    expect(await problem(over)).toMatchObject({ code: "limit_exceeded", limit: MAX_ACTIVE_PUBLISHABLE_KEYS });
  });

  test("another organisation's environment and keys are 404; no credential is 401", async ({
    app,
    owner,
    stranger,
  }) => {
    const created = (await (
      await stranger.api.post(path(stranger.environmentId), { name: "theirs" })
    ).json()) as Created;
    expect((await owner.api.get(path(stranger.environmentId))).status).toBe(404);
    expect((await owner.api.post(path(stranger.environmentId), { name: "mine?" })).status).toBe(404);
    expect(
      (await owner.api.delete(`${path(stranger.environmentId)}/${created.publishableKey.id}`)).status,
    ).toBe(404);
    // Their key id under my environment is not found either.
    expect((await owner.api.delete(`${path(owner.environmentId)}/${created.publishableKey.id}`)).status).toBe(
      404,
    );
    expect((await ingest(app, created.key)).status).toBe(200);
    expect((await app.request(`/api/v1${path(owner.environmentId)}`)).status).toBe(401);
  });

  test("managing needs publishable_keys:manage and owner/admin; listing needs publishable_keys:read", async ({
    app,
    deps,
    owner,
  }) => {
    const readOnly = await owner.api.post("/api-keys", {
      name: "ro",
      permissions: ["publishable_keys:read"],
    });
    const ro = client(app, ((await readOnly.json()) as { secret: string }).secret);
    expect((await ro.get(path(owner.environmentId))).status).toBe(200);
    const denied = await ro.post(path(owner.environmentId), { name: "nope" });
    expect(denied.status).toBe(403);
    expect(await problem(denied)).toMatchObject({ requiredPermission: "publishable_keys:manage" });

    const noRead = await owner.api.post("/api-keys", { name: "env", permissions: ["environments:read"] });
    const env = client(app, ((await noRead.json()) as { secret: string }).secret);
    expect((await env.get(path(owner.environmentId))).status).toBe(403);

    const other = await newTenant(deps, app);
    await deps.db
      .insert(memberships)
      .values({ organizationId: owner.organizationId, userId: other.userId, role: "member" });
    const secret = generateApiKeySecret();
    await deps.db.insert(apiKeys).values({
      id: "key_pk_member",
      organizationId: owner.organizationId,
      userId: other.userId,
      name: "member",
      prefix: secret.prefix,
      secretHash: secret.hash,
      permissions: [...permissions],
    });
    const member = client(app, secret.secret);
    expect((await member.get(path(owner.environmentId))).status).toBe(200);
    expect((await member.post(path(owner.environmentId), { name: "member-made" })).status).toBe(403);
  });
});
