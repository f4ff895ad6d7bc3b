import { describe, expect, type Tenant, test } from "../../../test/fixtures.ts";
import { problem } from "../../../test/http.ts";
import { destructiveTool, echoTool, type McpTestServer, manyTools } from "../../../test/lib/mcp-servers.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";
import { vaultSecrets } from "../../platform/db/schema/secrets.ts";

type Conn = { id: string; revision: number; readiness: string; enabled: boolean; [k: string]: unknown };
type Disc = {
  id: string;
  manifestHash: string;
  tools: { name: string; approvable: boolean; reason?: string }[];
};

const connectionsPath = (t: Tenant, envId = t.environmentId) => `/environments/${envId}/mcp-connections`;

async function create(
  t: Tenant,
  server: McpTestServer,
  auth: Record<string, unknown>,
  alias = "remote",
  envId?: string,
) {
  const res = await t.api.post(connectionsPath(t, envId), {
    alias,
    displayName: alias,
    endpointUrl: server.url,
    auth,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Conn;
}

async function call(res: Promise<Response>, status: number) {
  const r = await res;
  const text = await r.text();
  expect(r.status, text).toBe(status);
  return JSON.parse(text) as never;
}

/** create → (credential) → discover → approve all → enable. */
async function readyConnection(t: Tenant, server: McpTestServer, alias: string, envId?: string) {
  const base = connectionsPath(t, envId);
  let conn = await create(t, server, { kind: "none" }, alias, envId);
  const disc = (await call(
    t.api.post(`${base}/${conn.id}/discoveries`, undefined, { revision: conn.revision }),
    201,
  )) as Disc;
  conn = await call(
    t.api.post(
      `${base}/${conn.id}/tool-approvals`,
      { discoveryId: disc.id, toolNames: disc.tools.map((x) => x.name) },
      { revision: conn.revision },
    ),
    200,
  );
  return call(
    t.api.put(`${base}/${conn.id}/enablement`, { enabled: true }, { revision: conn.revision }),
    200,
  ) as Promise<Conn>;
}

describe("MCP connection lifecycle against real MCP servers", () => {
  test("bearer: create → credential → discover → approve → enable → ready → disable → update (stale) → preview → delete", async ({
    owner,
    mcp,
    deps,
    logs,
  }) => {
    const token = "tok_lifecycle_7f3a9c2e5b1d";
    const server = await mcp.start({
      auth: { kind: "bearer", token },
      tools: [echoTool("search"), destructiveTool("lookup"), echoTool("write_note")],
    });
    const base = connectionsPath(owner);
    let conn = await create(owner, server, { kind: "bearer" });
    expect(conn.readiness).toBe("credential_missing");

    // A rejected candidate is refused and nothing is stored.
    const wrong = await owner.api.put(
      `${base}/${conn.id}/credential`,
      { value: "not-the-token" },
      { revision: 1 },
    );
    expect(wrong.status).toBe(422);
    expect((await problem(wrong)).code).toBe("remote_auth_failed");
    expect(await deps.db.select().from(vaultSecrets)).toHaveLength(0);

    conn = await call(owner.api.put(`${base}/${conn.id}/credential`, { value: token }, { revision: 1 }), 200);
    expect(conn).toMatchObject({
      revision: 2,
      readiness: "approval_missing",
      auth: { credentialReady: true },
    });

    const disc = (await call(
      owner.api.post(`${base}/${conn.id}/discoveries`, undefined, { revision: 2 }),
      201,
    )) as Disc;
    expect(disc.tools.map((t) => t.name).sort()).toEqual(["lookup", "search", "write_note"]);
    expect(disc.tools.every((t) => t.approvable)).toBe(true);
    expect(disc.manifestHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    const afterDiscover = (await call(owner.api.get(`${base}/${conn.id}`), 200)) as Conn;
    expect(afterDiscover.revision).toBe(2);
    expect(afterDiscover.discovery).toMatchObject({ id: disc.id, toolCount: 3 });

    conn = await call(
      owner.api.post(
        `${base}/${conn.id}/tool-approvals`,
        { discoveryId: disc.id, toolNames: ["search", "lookup"] },
        { revision: 2 },
      ),
      200,
    );
    expect(conn).toMatchObject({
      revision: 3,
      readiness: "disabled",
      approval: {
        toolCount: 2,
        stale: false,
        tools: [
          { name: "lookup", access: "write", attested: false },
          { name: "search", access: "read", attested: false },
        ],
      },
    });
    // The list reads less of each row (and looks up discovery and approver in the same query):
    // it shows each connection exactly as the connection's own read does.
    const listed = (await call(owner.api.get(base), 200)) as { items: Conn[] };
    expect(listed.items).toEqual([await call(owner.api.get(`${base}/${conn.id}`), 200)]);
    expect(listed.items[0]).toMatchObject({ discovery: { id: disc.id, toolCount: 3 } });
    expect(listed.items[0]).toMatchObject({ approval: { approvedByEmail: expect.stringContaining("@") } });

    conn = await call(
      owner.api.put(`${base}/${conn.id}/enablement`, { enabled: true }, { revision: 3 }),
      200,
    );
    expect(conn).toMatchObject({ revision: 4, readiness: "ready", enabled: true });

    // Endpoint changes need a disabled connection.
    const blocked = await owner.api.patch(
      `${base}/${conn.id}`,
      { endpointUrl: `${server.url}/v2` },
      { revision: 4 },
    );
    expect((await problem(blocked)).code).toBe("connection_enabled");
    const noDelete = await owner.api.post(`${base}/${conn.id}/deletion-previews`, undefined, { revision: 4 });
    const receipt0 = ((await noDelete.json()) as { receipt: string }).receipt;
    const enabledDelete = await owner.api.delete(`${base}/${conn.id}`, {
      revision: 4,
      headers: { "deletion-receipt": receipt0 },
    });
    expect((await problem(enabledDelete)).code).toBe("connection_enabled");

    conn = await call(
      owner.api.put(`${base}/${conn.id}/enablement`, { enabled: false }, { revision: 4 }),
      200,
    );
    expect(conn).toMatchObject({ revision: 5, readiness: "disabled" });

    // Same origin, new path: approval goes stale, the credential stays.
    conn = await call(
      owner.api.patch(`${base}/${conn.id}`, { endpointUrl: `${server.url}/v2` }, { revision: 5 }),
      200,
    );
    expect(conn).toMatchObject({
      revision: 6,
      readiness: "approval_stale",
      approval: { stale: true },
      auth: { credentialReady: true },
    });
    const reenable = await owner.api.put(`${base}/${conn.id}/enablement`, { enabled: true }, { revision: 6 });
    expect((await problem(reenable)).code).toBe("approval_required");
    const staleApprove = await owner.api.post(
      `${base}/${conn.id}/tool-approvals`,
      { discoveryId: disc.id, toolNames: ["search"] },
      { revision: 6 },
    );
    expect((await problem(staleApprove)).code).toBe("discovery_stale");

    const preview = (await call(
      owner.api.post(`${base}/${conn.id}/deletion-previews`, undefined, { revision: 6 }),
      201,
    )) as {
      receipt: string;
      effects: Record<string, unknown>;
    };
    expect(preview.effects).toEqual({
      approvedToolCount: 2,
      credentialDestroyed: true,
      runningTasksAffected: 0,
    });
    expect(
      (
        await owner.api.delete(`${base}/${conn.id}`, {
          revision: 6,
          headers: { "deletion-receipt": preview.receipt },
        })
      ).status,
    ).toBe(204);
    const reuse = await owner.api.delete(`${base}/${conn.id}`, {
      revision: 6,
      headers: { "deletion-receipt": preview.receipt },
    });
    expect(reuse.status).toBe(404);
    expect(await deps.db.select().from(vaultSecrets)).toHaveLength(0);

    // The credential was sent to the server and never shown anywhere else.
    expect(server.requests.some((r) => r.headers.authorization === `Bearer ${token}`)).toBe(true);
    const audits = JSON.stringify(await deps.db.select().from(auditLog));
    expect(audits).not.toContain(token);
    expect(logs.text()).not.toContain(token);
    const secrets = JSON.stringify(await deps.db.select().from(vaultSecrets));
    expect(secrets).not.toContain(token);
  });

  test("API-key header auth sends exactly the configured header; rotation failure keeps the live credential", async ({
    owner,
    mcp,
  }) => {
    const server = await mcp.start({ auth: { kind: "api_key", headerName: "X-Api-Key", value: "key-one" } });
    const base = connectionsPath(owner);
    let conn = await create(owner, server, { kind: "api_key", headerName: "X-Api-Key" });
    conn = await call(
      owner.api.put(`${base}/${conn.id}/credential`, { value: "key-one" }, { revision: 1 }),
      200,
    );
    const before = server.requests.length;
    const bad = await owner.api.put(`${base}/${conn.id}/credential`, { value: "key-two" }, { revision: 2 });
    expect((await problem(bad)).code).toBe("remote_auth_failed");
    // The live credential still works: discovery authenticates with key-one.
    const disc = await owner.api.post(`${base}/${conn.id}/discoveries`, undefined, { revision: 2 });
    expect(disc.status).toBe(201);
    const sent = server.requests.slice(before).map((r) => r.headers["x-api-key"]);
    expect(sent).toContain("key-two");
    expect(sent.at(-1)).toBe("key-one");
    expect(server.requests.every((r) => r.headers.authorization === undefined)).toBe(true);

    // Rotation to a value the server accepts replaces it.
    server.setAuth({ kind: "api_key", headerName: "X-Api-Key", value: "key-three" });
    conn = await call(
      owner.api.put(`${base}/${conn.id}/credential`, { value: "key-three" }, { revision: 2 }),
      200,
    );
    expect(conn.revision).toBe(3);
    expect((await owner.api.post(`${base}/${conn.id}/discoveries`, undefined, { revision: 3 })).status).toBe(
      201,
    );
  });

  test("changing the auth kind destroys the credential; moving to another origin does too", async ({
    owner,
    mcp,
  }) => {
    const server = await mcp.start({ auth: { kind: "bearer", token: "t1" } });
    const other = await mcp.start({ auth: { kind: "bearer", token: "t1" } });
    const base = connectionsPath(owner);
    let conn = await create(owner, server, { kind: "bearer" });
    conn = await call(owner.api.put(`${base}/${conn.id}/credential`, { value: "t1" }, { revision: 1 }), 200);
    conn = await call(
      owner.api.patch(`${base}/${conn.id}`, { endpointUrl: other.url }, { revision: 2 }),
      200,
    );
    expect(conn).toMatchObject({ readiness: "credential_missing", auth: { credentialReady: false } });
    // Repointing sent nothing: the old credential never travelled to the new origin.
    expect(other.requests).toHaveLength(0);
    conn = await call(owner.api.put(`${base}/${conn.id}/credential`, { value: "t1" }, { revision: 3 }), 200);
    conn = await call(
      owner.api.patch(
        `${base}/${conn.id}`,
        { auth: { kind: "api_key", headerName: "X-Key" } },
        { revision: 4 },
      ),
      200,
    );
    expect(conn).toMatchObject({
      readiness: "credential_missing",
      auth: { kind: "api_key", credentialReady: false },
    });
  });

  test("approval rules: unknown tools 422, non-approvable tools 422, more than 128 is 409 limit_exceeded", async ({
    owner,
    mcp,
  }) => {
    const server = await mcp.start({
      tools: [
        echoTool("ok"),
        echoTool("too-long", { description: "x".repeat(5000) }),
        ...manyTools(130, "bulk"),
      ],
      pageSize: 50,
    });
    const base = connectionsPath(owner);
    const conn = await create(owner, server, { kind: "none" });
    const disc = (await call(
      owner.api.post(`${base}/${conn.id}/discoveries`, undefined, { revision: 1 }),
      201,
    )) as Disc;
    expect(disc.tools).toHaveLength(132);
    expect(disc.tools.find((t) => t.name === "too-long")).toMatchObject({
      approvable: false,
      reason: expect.stringMatching(/description/),
    });

    const unknown = await owner.api.post(
      `${base}/${conn.id}/tool-approvals`,
      { discoveryId: disc.id, toolNames: ["ok", "ghost"] },
      { revision: 1 },
    );
    expect(await problem(unknown)).toMatchObject({ code: "unknown_tool", toolNames: ["ghost"] });
    const refused = await owner.api.post(
      `${base}/${conn.id}/tool-approvals`,
      { discoveryId: disc.id, toolNames: ["too-long"] },
      { revision: 1 },
    );
    expect((await problem(refused)).code).toBe("tool_not_approvable");
    const tooMany = await owner.api.post(
      `${base}/${conn.id}/tool-approvals`,
      { discoveryId: disc.id, toolNames: disc.tools.filter((t) => t.approvable).map((t) => t.name) },
      { revision: 1 },
    );
    expect(tooMany.status).toBe(409);
    expect(await problem(tooMany)).toMatchObject({ code: "limit_exceeded", limit: 128, requested: 131 });
  });

  test("environment limits: 64 ready tools and 8 ready connections", async ({ owner, mcp }) => {
    const big = await mcp.start({ tools: manyTools(40, "a") });
    const big2 = await mcp.start({ tools: manyTools(30, "b") });
    await readyConnection(owner, big, "big");
    const base = connectionsPath(owner);
    let second = await create(owner, big2, { kind: "none" }, "big2");
    const disc = (await call(
      owner.api.post(`${base}/${second.id}/discoveries`, undefined, { revision: 1 }),
      201,
    )) as Disc;
    second = await call(
      owner.api.post(
        `${base}/${second.id}/tool-approvals`,
        { discoveryId: disc.id, toolNames: disc.tools.map((t) => t.name) },
        { revision: 1 },
      ),
      200,
    );
    const over = await owner.api.put(`${base}/${second.id}/enablement`, { enabled: true }, { revision: 2 });
    expect(over.status).toBe(409);
    expect(await problem(over)).toMatchObject({
      code: "limit_exceeded",
      limit: 64,
      current: 40,
      requested: 30,
    });

    // Eight small ready connections in another environment, then a ninth is refused.
    const env = (await call(owner.api.post("/environments", { name: "many" }), 201)) as { id: string };
    const small = await mcp.start({ tools: [echoTool("one")] });
    for (let i = 0; i < 8; i++) await readyConnection(owner, small, `s${i}`, env.id);
    const ninth = await create(owner, small, { kind: "none" }, "s8", env.id);
    const d9 = (await call(
      owner.api.post(`${connectionsPath(owner, env.id)}/${ninth.id}/discoveries`, undefined, { revision: 1 }),
      201,
    )) as Disc;
    await call(
      owner.api.post(
        `${connectionsPath(owner, env.id)}/${ninth.id}/tool-approvals`,
        { discoveryId: d9.id, toolNames: ["one"] },
        { revision: 1 },
      ),
      200,
    );
    const refused = await owner.api.put(
      `${connectionsPath(owner, env.id)}/${ninth.id}/enablement`,
      { enabled: true },
      { revision: 2 },
    );
    expect(await problem(refused)).toMatchObject({ code: "limit_exceeded", limit: 8, current: 8 });
  });

  test("discovery limits and hostile servers: >1,000 tools, redirects, unreachable", async ({
    owner,
    mcp,
  }) => {
    const base = connectionsPath(owner);
    const huge = await mcp.start({ tools: manyTools(1001), pageSize: 200 });
    const c1 = await create(owner, huge, { kind: "none" }, "huge");
    const r1 = await owner.api.post(`${base}/${c1.id}/discoveries`, undefined, { revision: 1 });
    expect(r1.status).toBe(422);
    expect((await problem(r1)).code).toBe("discovery_limit_exceeded");

    const target = await mcp.start();
    const redirecting = await mcp.start();
    redirecting.redirectTo(target.url);
    const c2 = await create(owner, redirecting, { kind: "none" }, "redir");
    const r2 = await owner.api.post(`${base}/${c2.id}/discoveries`, undefined, { revision: 1 });
    expect(r2.status).toBe(422);
    expect(await problem(r2)).toMatchObject({ code: "egress_blocked", rule: "redirect" });
    expect(target.requests).toHaveLength(0);

    const dead = await mcp.start();
    const c3 = await create(owner, dead, { kind: "none" }, "dead");
    await dead.close();
    const r3 = await owner.api.post(`${base}/${c3.id}/discoveries`, undefined, { revision: 1 });
    expect(r3.status).toBe(502);
    expect((await problem(r3)).code).toBe("remote_unreachable");
  });

  test("20 concurrent PATCHes with one revision: exactly one succeeds", async ({ owner, mcp }) => {
    const server = await mcp.start();
    const conn = await create(owner, server, { kind: "none" });
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        owner.api.patch(`${connectionsPath(owner)}/${conn.id}`, { displayName: `n${i}` }, { revision: 1 }),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(19);
  });
});
