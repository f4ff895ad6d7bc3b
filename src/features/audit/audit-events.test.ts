// The audit trail read end to end: REST, the `patchbay audit list` CLI (a child process against
// this file's app on a loopback port) and the web page; tenancy, bad input, and no secrets.
import { describe, expect, type Tenant, test } from "../../../test/fixtures.ts";
import { listen, problem } from "../../../test/http.ts";
import { runCli } from "../../../test/lib/cli-child.ts";
import { createMemberKey } from "../../../test/lib/members.ts";
import { signedInBrowser } from "../../../test/web.ts";
import type { AuditEvent, AuditEventPage } from "./schemas.ts";

const eventsPath = (t: Tenant, query = "") => `/organizations/${t.organizationId}/audit-events${query}`;

async function events(t: Tenant, query = ""): Promise<AuditEventPage> {
  const res = await t.api.get(eventsPath(t, query));
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text) as AuditEventPage;
}

describe("audit trail", () => {
  test("lists who did what through which door, newest first, with every filter and the shared pagination", async ({
    app,
    deps,
    owner,
  }) => {
    const staging = (await (await owner.api.post("/environments", { name: "staging" })).json()) as {
      id: string;
    };
    // The CLI announces itself in its User-Agent: the same request through it is the `cli` door.
    const viaCli = await owner.api.post(
      "/api-keys",
      { name: "ci", permissions: ["environments:read"] },
      { headers: { "user-agent": "patchbay-cli/9.9.9" } },
    );
    const key = (await viaCli.json()) as { apiKey: { id: string } };
    expect((await owner.api.delete(`/api-keys/${key.apiKey.id}`)).status).toBe(204);

    const all = await events(owner);
    expect(all.items.map((e) => e.action)).toEqual([
      "api_key.revoked",
      "api_key.created",
      "environment.created",
      "organization.bootstrapped",
    ]);
    const [revoked, created, env, boot] = all.items as [AuditEvent, AuditEvent, AuditEvent, AuditEvent];
    expect(created).toMatchObject({
      channel: "cli",
      actor: { type: "api_key", userId: owner.userId, email: expect.stringContaining("@") },
      target: { type: "api_key", id: key.apiKey.id },
      environmentId: null,
      details: { name: "ci", permissions: ["environments:read"] },
    });
    expect(revoked.channel).toBe("rest");
    expect(env).toMatchObject({
      channel: "rest",
      environmentId: staging.id,
      target: { type: "environment" },
    });
    expect(boot).toMatchObject({
      channel: "system",
      actor: { type: "system", id: "bootstrap", email: null },
    });

    const only = async (query: string) => (await events(owner, query)).items.map((e) => e.action);
    expect(await only(`?environmentId=${staging.id}`)).toEqual(["environment.created"]);
    expect(await only("?action=api_key.created")).toEqual(["api_key.created"]);
    expect(await only("?channel=cli")).toEqual(["api_key.created"]);
    expect(await only(`?target=${key.apiKey.id}`)).toEqual(["api_key.revoked", "api_key.created"]);
    const email = created.actor.email ?? "";
    expect(await only(`?actor=${encodeURIComponent(email.toUpperCase())}`)).toHaveLength(3);
    expect(await only(`?actor=${owner.userId}`)).toHaveLength(3);
    expect(await only("?actor=bootstrap")).toEqual(["organization.bootstrapped"]);
    expect(await only(`?from=${encodeURIComponent(env.occurredAt)}&action=environment.created`)).toEqual([
      "environment.created",
    ]);
    expect(await only(`?to=${encodeURIComponent(env.occurredAt)}&action=environment.created`)).toEqual([]);

    // pageSize + cursor as on every list: each event exactly once, in the same order.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: AuditEventPage = await events(owner, `?pageSize=1${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.items.length).toBeLessThanOrEqual(1);
      seen.push(...page.items.map((e) => e.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.items.map((e) => e.id));

    // The web UI's changes are the `web` door, its person the signed-in user.
    const browser = await signedInBrowser(app, deps, owner.userId);
    await browser.page(`/orgs/${owner.organizationId}/api-keys`);
    const made = await browser.post(`/orgs/${owner.organizationId}/api-keys`, {
      name: "from the web",
      permissions: "environments:read",
    });
    expect(made.status).toBeLessThan(400);
    const [fromWeb] = (await events(owner, "?channel=web")).items;
    expect(fromWeb).toMatchObject({
      action: "api_key.created",
      actor: { type: "web_session", userId: owner.userId },
      details: { name: "from the web" },
    });
  });

  test("owners and admins only; another organisation's trail and ids find nothing", async ({
    app,
    deps,
    owner,
    stranger,
  }) => {
    const member = await createMemberKey(deps, app, owner);
    const refused = await member.get(eventsPath(owner));
    expect(refused.status).toBe(403);
    expect((await problem(refused)).code).toBe("forbidden");

    // Another organisation's id in the path is 404, as any resource of theirs.
    const foreign = await owner.api.get(eventsPath(stranger));
    expect(foreign.status).toBe(404);
    expect((await problem(foreign)).code).toBe("not_found");

    const theirEnv = (await (await stranger.api.post("/environments", { name: "theirs" })).json()) as {
      id: string;
    };
    // Their environment as a filter is refused like any unknown filter value (it is not ours).
    const envFilter = await owner.api.get(eventsPath(owner, `?environmentId=${theirEnv.id}`));
    expect(envFilter.status).toBe(400);
    expect(await problem(envFilter)).toMatchObject({ code: "invalid_request", parameter: "environmentId" });
    // Their target, their person and their credential as filters: nothing.
    const theirEmail = (await events(stranger)).items.find((e) => e.actor.email)?.actor.email ?? "";
    expect(theirEmail).toContain("@");
    for (const query of [
      `?target=${theirEnv.id}`,
      `?actor=${stranger.userId}`,
      `?actor=${encodeURIComponent(theirEmail)}`,
      "?actor=nobody@example.com",
    ]) {
      expect((await events(owner, query)).items, query).toEqual([]);
    }
    const ours = await events(owner);
    expect(ours.items.every((e) => e.target.id !== theirEnv.id)).toBe(true);
    expect(JSON.stringify(ours)).not.toContain(stranger.organizationId);
  });

  test("bad filters are 400 invalid_request", async ({ owner }) => {
    for (const query of [
      "?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z",
      "?from=2026-11-01T00:00:00Z&to=2026-11-01T00:00:00Z",
      "?from=yesterday",
      "?to=2026-13-01T00:00:00Z",
      "?action=api_key.exploded",
      "?channel=carrier-pigeon",
      "?environmentId=not-a-uuid",
      "?environmentId=00000000-0000-4000-8000-000000000000",
      "?actorId=usr_x",
      "?pageSize=0",
      "?pageSize=201",
      "?cursor=not-a-cursor",
      `?cursor=${Buffer.from(JSON.stringify(["2026-11-01T00:00:00.000Z", "abc"])).toString("base64url")}`,
      "?target=",
    ]) {
      const res = await owner.api.get(eventsPath(owner, query));
      expect(res.status, query).toBe(400);
      expect((await problem(res)).code, query).toBe("invalid_request");
    }
  });

  test("a credential set and rotated is in the trail, and its value nowhere in REST, CLI or web output", async ({
    app,
    deps,
    owner,
    mcp,
  }) => {
    const first = "tok_audit_first_4c1e9b7a2d";
    const second = "tok_audit_second_8f2d6a0c3e";
    const server = await mcp.start({ auth: { kind: "bearer", token: first } });
    const base = `/environments/${owner.environmentId}/mcp-connections`;
    const created = await owner.api.post(base, {
      alias: "vault",
      displayName: "Vault",
      endpointUrl: server.url,
      auth: { kind: "bearer" },
    });
    expect(created.status).toBe(201);
    const conn = (await created.json()) as { id: string };
    const set = await owner.api.put(`${base}/${conn.id}/credential`, { value: first }, { revision: 1 });
    expect(set.status, await set.clone().text()).toBe(200);
    server.setAuth({ kind: "bearer", token: second });
    const rotated = await owner.api.put(`${base}/${conn.id}/credential`, { value: second }, { revision: 2 });
    expect(rotated.status, await rotated.clone().text()).toBe(200);

    const rest = await owner.api.get(eventsPath(owner, `?target=${conn.id}`));
    const restText = await rest.text();
    expect(rest.status).toBe(200);
    const actions = (JSON.parse(restText) as AuditEventPage).items.map((e) => e.action);
    expect(actions).toEqual([
      "mcp_connection.credential_rotated",
      "mcp_connection.credential_set",
      "mcp_connection.created",
    ]);

    const { url: baseUrl, close } = await listen(app);
    try {
      const table = await runCli(baseUrl, owner.apiKey, ["audit", "list", "--target", conn.id]);
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toMatch(/^TIME\s+ACTION\s+ACTOR\s+DOOR\s+TARGET/);
      expect(table.stdout).toContain("mcp_connection.credential_rotated");
      const json = await runCli(baseUrl, owner.apiKey, ["audit", "list", "--json", "--all"]);
      expect(json.code, json.stderr).toBe(0);
      expect((JSON.parse(json.stdout) as AuditEventPage).items.length).toBeGreaterThanOrEqual(4);
      const bad = await runCli(baseUrl, owner.apiKey, ["audit", "list", "--action", "nope"]);
      expect(bad.code).toBe(1); // server-side validation (docs/cli.md)
      expect(bad.stderr).toContain("invalid_request");

      const browser = await signedInBrowser(app, deps, owner.userId);
      const page = await browser.page(`/orgs/${owner.organizationId}/audit?target=${conn.id}`);
      expect(page).toContain("mcp_connection.credential_rotated");
      const refused = await browser.get(`/orgs/${owner.organizationId}/audit?from=soon`);
      expect(refused.status).toBe(400);

      for (const output of [restText, table.stdout, table.stderr, json.stdout, page]) {
        expect(output).not.toContain(first);
        expect(output).not.toContain(second);
      }
    } finally {
      await close();
    }
  });
});
