import { randomUUID } from "node:crypto";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { client, problem } from "../../../test/http.ts";
import { createApp } from "../../app.ts";
import { strictEgressPolicy } from "../../platform/egress/address-policy.ts";

const body = (over: Record<string, unknown> = {}) => ({
  alias: "runbooks",
  displayName: "Runbooks",
  endpointUrl: "https://mcp.example.com/mcp",
  auth: { kind: "bearer" },
  ...over,
});

describe("MCP connections without a remote server", () => {
  test("create: disabled, no credential, revision 1, only the origin shown", async ({ owner }) => {
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    const res = await owner.api.post(path, body());
    expect(res.status).toBe(201);
    expect(res.headers.get("etag")).toBe('"1"');
    const conn = (await res.json()) as Record<string, unknown>;
    expect(conn).toMatchObject({
      alias: "runbooks",
      endpointOrigin: "https://mcp.example.com",
      enabled: false,
      revision: 1,
      readiness: "credential_missing",
      auth: { kind: "bearer", credentialReady: false, credentialUpdatedAt: null },
      discovery: null,
      approval: null,
    });
    expect(JSON.stringify(conn)).not.toContain('/mcp"');
    expect(conn).not.toHaveProperty("endpointUrl");
    expect(res.headers.get("location")).toBe(`/api/v1${path}/${conn.id}`);
  });

  test("readiness for auth none starts at approval_missing", async ({ owner }) => {
    const res = await owner.api.post(
      `/environments/${owner.environmentId}/mcp-connections`,
      body({ auth: { kind: "none" } }),
    );
    expect(await res.json()).toMatchObject({
      readiness: "approval_missing",
      auth: { credentialReady: true },
    });
  });

  test("create needs an Idempotency-Key and replays on retry", async ({ owner }) => {
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    const missing = await owner.api.post(path, body(), { idempotencyKey: false });
    expect(missing.status).toBe(400);
    expect((await problem(missing)).code).toBe("idempotency_key_required");
    const a = await owner.api.post(path, body({ alias: "once" }), { idempotencyKey: "create-once" });
    const b = await owner.api.post(path, body({ alias: "once" }), { idempotencyKey: "create-once" });
    expect(b.headers.get("idempotency-replayed")).toBe("true");
    expect(await b.text()).toBe(await a.text());
  });

  test("aliases are unique per environment and immutable", async ({ owner }) => {
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    const created = (await (await owner.api.post(path, body({ alias: "dup" }))).json()) as { id: string };
    const dup = await owner.api.post(path, body({ alias: "dup" }));
    expect(dup.status).toBe(409);
    expect((await problem(dup)).code).toBe("alias_taken");
    const rename = await owner.api.patch(`${path}/${created.id}`, { alias: "other" }, { revision: 1 });
    expect(rename.status).toBe(400);
  });

  test("hostile endpoints are refused at create and update under the production policy, naming the rule", async ({
    deps,
    owner,
  }) => {
    // This file's egress allows loopback for test servers; the production policy allows nothing private.
    const strictApp = createApp({ ...deps, config: { ...deps.config, egress: strictEgressPolicy() } });
    const api = client(strictApp, owner.apiKey);
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    const cases: [string, string][] = [
      ["http://mcp.example.com/mcp", "scheme"],
      ["https://mcp.example.com:8443/mcp", "port"],
      ["https://user:pw@mcp.example.com/mcp", "userinfo"],
      ["https://mcp.example.com/mcp?token=x", "query"],
      ["https://mcp.example.com/mcp#frag", "fragment"],
      ["https://127.0.0.1/mcp", "host_ip_not_global"],
      ["https://[::1]/mcp", "host_ip_not_global"],
      ["https://169.254.169.254/latest", "host_ip_not_global"],
      ["https://2130706433/", "host_ip_not_global"],
      ["https://localhost/mcp", "host_local_name"],
      ["https://metadata.internal/mcp", "host_local_name"],
    ];
    const existing = (await (
      await api.post(path, body({ alias: "target", auth: { kind: "none" } }))
    ).json()) as { id: string };
    for (const [endpointUrl, rule] of cases) {
      const res = await api.post(path, body({ alias: "hostile", endpointUrl }));
      expect(res.status, endpointUrl).toBe(422);
      expect(await problem(res), endpointUrl).toMatchObject({ code: "invalid_endpoint_url", rule });
      const upd = await api.patch(`${path}/${existing.id}`, { endpointUrl }, { revision: 1 });
      expect(upd.status, endpointUrl).toBe(422);
    }
  });

  test("the endpoint host is canonicalised: lowercase, IDNA, no trailing dot, :443 dropped", async ({
    owner,
  }) => {
    const res = await owner.api.post(
      `/environments/${owner.environmentId}/mcp-connections`,
      body({ alias: "canon", endpointUrl: "https://MCP.Bücher.example.:443/Path" }),
    );
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ endpointOrigin: "https://mcp.xn--bcher-kva.example" });
  });

  test("API-key header names must be tokens and not reserved", async ({ owner }) => {
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    for (const headerName of [
      "Authorization",
      "Cookie",
      "Host",
      "Transfer-Encoding",
      "Mcp-Session-Id",
      "bad header",
      "X:Y",
    ]) {
      const res = await owner.api.post(path, body({ alias: "hdr", auth: { kind: "api_key", headerName } }));
      expect(res.status, headerName).toBe(400);
    }
    const ok = await owner.api.post(
      path,
      body({ alias: "hdr", auth: { kind: "api_key", headerName: "X-Api-Key" } }),
    );
    expect(ok.status).toBe(201);
    expect(await ok.json()).toMatchObject({ auth: { kind: "api_key", headerName: "X-Api-Key" } });
  });

  test("credential on auth none is 409 credential_not_applicable; discover without credential is 409 credential_required", async ({
    owner,
  }) => {
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    const none = (await (
      await owner.api.post(path, body({ alias: "none", auth: { kind: "none" } }))
    ).json()) as { id: string };
    const cred = await owner.api.put(
      `${path}/${none.id}/credential`,
      { value: "secret-token" },
      { revision: 1 },
    );
    expect(cred.status).toBe(409);
    expect((await problem(cred)).code).toBe("credential_not_applicable");
    const bearer = (await (await owner.api.post(path, body({ alias: "bearer" }))).json()) as { id: string };
    const disc = await owner.api.post(`${path}/${bearer.id}/discoveries`, undefined, { revision: 1 });
    expect(disc.status).toBe(409);
    expect((await problem(disc)).code).toBe("credential_required");
  });

  test("enable without approval is 409 approval_required; without credential 409 credential_required", async ({
    owner,
  }) => {
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    const none = (await (
      await owner.api.post(path, body({ alias: "n1", auth: { kind: "none" } }))
    ).json()) as { id: string };
    const r1 = await owner.api.put(`${path}/${none.id}/enablement`, { enabled: true }, { revision: 1 });
    expect((await problem(r1)).code).toBe("approval_required");
    const bearer = (await (await owner.api.post(path, body({ alias: "b1" }))).json()) as { id: string };
    const r2 = await owner.api.put(`${path}/${bearer.id}/enablement`, { enabled: true }, { revision: 1 });
    expect((await problem(r2)).code).toBe("credential_required");
  });

  test("mutations need If-Match: 428 without, 412 stale", async ({ owner }) => {
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    const conn = (await (await owner.api.post(path, body({ alias: "im" }))).json()) as { id: string };
    const cases: [string, string, unknown][] = [
      ["PATCH", "", { displayName: "X" }],
      ["PUT", "/enablement", { enabled: false }],
      ["PUT", "/credential", { value: "abc" }],
      ["POST", "/discoveries", undefined],
      ["POST", "/tool-approvals", { discoveryId: "dsc_x", toolNames: ["a"] }],
      ["POST", "/deletion-previews", undefined],
      ["DELETE", "", undefined],
    ];
    for (const [method, suffix, b] of cases) {
      const missing = await owner.api.request(method, `${path}/${conn.id}${suffix}`, { body: b });
      expect(missing.status, `${method} ${suffix}`).toBe(428);
      const stale = await owner.api.request(method, `${path}/${conn.id}${suffix}`, { body: b, revision: 7 });
      expect(stale.status, `${method} ${suffix}`).toBe(412);
      expect(await problem(stale)).toMatchObject({ code: "revision_conflict", currentRevision: 1 });
    }
  });

  test("update displayName bumps the revision; a no-op does not", async ({ owner }) => {
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    const conn = (await (await owner.api.post(path, body({ alias: "upd" }))).json()) as { id: string };
    const res = await owner.api.patch(`${path}/${conn.id}`, { displayName: "Renamed" }, { revision: 1 });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ displayName: "Renamed", revision: 2 });
    const same = await owner.api.patch(`${path}/${conn.id}`, { displayName: "Renamed" }, { revision: 2 });
    expect(await same.json()).toMatchObject({ revision: 2 });
    expect(same.headers.get("etag")).toBe('"2"');
  });

  test("deletion: preview then delete with the receipt; receipts are single use and revision-bound", async ({
    owner,
  }) => {
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    const conn = (await (await owner.api.post(path, body({ alias: "del" }))).json()) as { id: string };
    const noReceipt = await owner.api.delete(`${path}/${conn.id}`, { revision: 1 });
    expect(noReceipt.status).toBe(400);
    expect((await problem(noReceipt)).code).toBe("receipt_required");

    const prev = await owner.api.post(`${path}/${conn.id}/deletion-previews`, undefined, { revision: 1 });
    expect(prev.status).toBe(201);
    const preview = (await prev.json()) as {
      receipt: string;
      expiresAt: string;
      effects: Record<string, unknown>;
    };
    expect(preview.effects).toEqual({
      approvedToolCount: 0,
      credentialDestroyed: false,
      runningTasksAffected: 0,
    });
    expect(new Date(preview.expiresAt).getTime() - Date.now()).toBeLessThanOrEqual(5 * 60 * 1000);

    const bogus = await owner.api.delete(`${path}/${conn.id}`, {
      revision: 1,
      headers: { "deletion-receipt": "dlr_bogus" },
    });
    expect((await problem(bogus)).code).toBe("receipt_invalid");

    // A change after the preview invalidates the receipt.
    await owner.api.patch(`${path}/${conn.id}`, { displayName: "Changed" }, { revision: 1 });
    const stale = await owner.api.delete(`${path}/${conn.id}`, {
      revision: 2,
      headers: { "deletion-receipt": preview.receipt },
    });
    expect((await problem(stale)).code).toBe("receipt_invalid");

    const fresh = (await (
      await owner.api.post(`${path}/${conn.id}/deletion-previews`, undefined, { revision: 2 })
    ).json()) as { receipt: string };
    const del = await owner.api.delete(`${path}/${conn.id}`, {
      revision: 2,
      headers: { "deletion-receipt": fresh.receipt },
    });
    expect(del.status).toBe(204);
    expect((await owner.api.get(`${path}/${conn.id}`)).status).toBe(404);
  });

  test("tenancy: other organisations and other environments see 404; members and non-permitted keys 403", async ({
    app,
    owner,
    stranger,
  }) => {
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    const conn = (await (await owner.api.post(path, body({ alias: "mine" }))).json()) as { id: string };
    // Another organisation, with its own valid environment id or ours.
    expect((await stranger.api.get(`${path}/${conn.id}`)).status).toBe(404);
    expect((await stranger.api.get(path)).status).toBe(404);
    expect(
      (await stranger.api.get(`/environments/${stranger.environmentId}/mcp-connections/${conn.id}`)).status,
    ).toBe(404);
    expect(
      (
        await stranger.api.patch(
          `/environments/${stranger.environmentId}/mcp-connections/${conn.id}`,
          { displayName: "x" },
          { revision: 1 },
        )
      ).status,
    ).toBe(404);
    // Another environment of the same organisation.
    const staging = (await (await owner.api.post("/environments", { name: "staging" })).json()) as {
      id: string;
    };
    expect((await owner.api.get(`/environments/${staging.id}/mcp-connections/${conn.id}`)).status).toBe(404);
    const stagingList = (await (
      await owner.api.get(`/environments/${staging.id}/mcp-connections`)
    ).json()) as { items: unknown[] };
    expect(stagingList.items).toEqual([]);
    expect((await owner.api.get(`/environments/${randomUUID()}/mcp-connections`)).status).toBe(404);

    // Keys without the MCP permissions.
    const made = await owner.api.post("/api-keys", {
      name: "envs only",
      permissions: ["environments:read", "environments:manage"],
    });
    const limited = client(app, ((await made.json()) as { secret: string }).secret);
    expect((await limited.get(path)).status).toBe(403);
    const readOnly = client(
      app,
      (
        (await (
          await owner.api.post("/api-keys", { name: "mcp read", permissions: ["mcp_connections:read"] })
        ).json()) as { secret: string }
      ).secret,
    );
    expect((await readOnly.get(path)).status).toBe(200);
    const write = await readOnly.patch(`${path}/${conn.id}`, { displayName: "x" }, { revision: 1 });
    expect(write.status).toBe(403);
    expect(await problem(write)).toMatchObject({
      code: "forbidden",
      requiredPermission: "mcp_connections:manage",
    });
  });

  test("list is paginated", async ({ owner }) => {
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    for (let i = 0; i < 3; i++) await owner.api.post(path, body({ alias: `p${i}` }));
    const first = (await (await owner.api.get(`${path}?pageSize=2`)).json()) as {
      items: { alias: string }[];
      nextCursor: string;
    };
    expect(first.items.map((c) => c.alias)).toEqual(["p0", "p1"]);
    const second = (await (await owner.api.get(`${path}?pageSize=2&cursor=${first.nextCursor}`)).json()) as {
      items: { alias: string }[];
      nextCursor: null;
    };
    expect(second.items.map((c) => c.alias)).toEqual(["p2"]);
    expect(second.nextCursor).toBeNull();
  });
});
