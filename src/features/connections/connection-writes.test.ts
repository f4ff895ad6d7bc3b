import { randomUUID } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { vi } from "vitest";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { createConnection } from "../../../test/lib/connections.ts";
import type { Deps } from "../../deps.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import { mcpDiscoveries } from "../../platform/db/schema/mcp-discoveries.ts";
import { users } from "../../platform/db/schema/users.ts";
import { viewConnection } from "./view-connection.ts";

// A connection write's answer and audit rows come with the change's own statement
// (docs/performance.md, "REST API"). These pin what folding them must keep: the same view as a
// GET, the audit rows at the new revision, atomicity and tenancy.

/** The SQL of every statement sent while `fn` runs (both engines' sessions prepare each one). */
async function statementsDuring(deps: Deps, fn: () => Promise<unknown>): Promise<string[]> {
  const session = (deps.db as unknown as { _: { session: object } })._.session;
  const proto = Object.getPrototypeOf(session) as {
    prepareQuery(query: { sql: string }, ...rest: unknown[]): unknown;
  };
  const spy = vi.spyOn(proto, "prepareQuery");
  try {
    await fn();
    return spy.mock.calls.map((call) => call[0].sql);
  } finally {
    spy.mockRestore();
  }
}

/** A discovery as discover-connection-tools stores it, without a remote server: its id. */
async function storeDiscovery(deps: Deps, connectionId: string): Promise<string> {
  const [row] = await deps.db.select().from(mcpConnections).where(eq(mcpConnections.id, connectionId));
  if (!row) throw new Error(`no connection ${connectionId}`);
  const discoveryId = `dsc_${randomUUID().replaceAll("-", "")}`;
  await deps.db.insert(mcpDiscoveries).values({
    id: discoveryId,
    organizationId: row.organizationId,
    environmentId: row.environmentId,
    connectionId,
    connectionRevision: row.revision,
    configVersion: row.configVersion,
    manifestHash: "a".repeat(64),
    toolCount: 2,
    tools: ["lookup", "search"].map((name, k) => ({
      name,
      description: `Tool ${name}`,
      inputSchema: { type: "object" },
      annotations: { readOnlyHint: k === 0 },
      hash: `${k}`.repeat(64),
      approvable: true,
    })),
    discoveredAt: new Date(),
  });
  await deps.db
    .update(mcpConnections)
    .set({ latestDiscoveryId: discoveryId })
    .where(eq(mcpConnections.id, connectionId));
  return discoveryId;
}

const auditOf = (deps: Deps, targetId: string) =>
  deps.db.select().from(auditLog).where(eq(auditLog.targetId, targetId)).orderBy(auditLog.id);

describe("connection writes", () => {
  test("a rename locks the row and then changes it, audits it and reads its view in one statement", async ({
    deps,
    owner,
  }) => {
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    const created = await createConnection(owner.api, owner.environmentId, "one");
    let res: Response | undefined;
    const sent = await statementsDuring(deps, async () => {
      res = await owner.api.patch(`${path}/${created.id}`, { displayName: "Renamed" }, { revision: 1 });
    });
    expect(res?.status).toBe(200);
    const patched = await res?.json();
    expect(patched).toMatchObject({ displayName: "Renamed", revision: 2 });
    expect(await (await owner.api.get(`${path}/${created.id}`)).json()).toEqual(patched);

    const onConnections = sent.filter((s) => /"(mcp_connections|audit_log|mcp_discoveries|users)"/.test(s));
    expect(onConnections).toHaveLength(2);
    expect(onConnections[0]).toMatch(/for update of "mcp_connections"/);
    expect(onConnections[1]).toMatch(/insert into "audit_log".*update "mcp_connections"/s);

    const audits = await auditOf(deps, created.id);
    expect(audits.map((a) => a.action)).toEqual(["mcp_connection.created", "mcp_connection.updated"]);
    expect(audits[1]).toMatchObject({
      organizationId: owner.organizationId,
      environmentId: owner.environmentId,
      channel: "rest",
      details: { revision: 2, changed: ["displayName"], endpointOrigin: "https://one.example.com" },
    });
    expect(audits[1]?.idempotencyKey).toBeTruthy();
  });

  test("an approval answers with the discovery and the approver's email, and audits both rows at the new revision", async ({
    deps,
    owner,
  }) => {
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    const created = await createConnection(owner.api, owner.environmentId, "two");
    const discoveryId = await storeDiscovery(deps, created.id);

    const res = await owner.api.post(
      `${path}/${created.id}/tool-approvals`,
      { discoveryId, toolNames: ["search", "lookup"], attestReadOnly: ["search"] },
      { revision: 1 },
    );
    expect(res.status).toBe(200);
    const approved = await res.json();
    const [user] = await deps.db.select().from(users).where(eq(users.id, owner.userId));
    expect(approved).toMatchObject({
      revision: 2,
      discovery: { id: discoveryId, toolCount: 2, manifestHash: "a".repeat(64) },
      approval: {
        approvedBy: owner.userId,
        approvedByEmail: user?.email,
        toolCount: 2,
        tools: [
          { name: "lookup", access: "read", attested: false },
          { name: "search", access: "read", attested: true },
        ],
      },
    });
    expect(await (await owner.api.get(`${path}/${created.id}`)).json()).toEqual(approved);

    const audits = await auditOf(deps, created.id);
    expect(audits.slice(1).map((a) => [a.action, (a.details as { revision: number }).revision])).toEqual([
      ["mcp_connection.tools_approved", 2],
      ["mcp_connection.tools_attested_read_only", 2],
    ]);
  });

  test("a connection's view is of the row it was given, even after a change committed since it was read", async ({
    deps,
    owner,
  }) => {
    const created = await createConnection(owner.api, owner.environmentId, "stale");
    const byId = eq(mcpConnections.id, created.id);
    const [before] = await deps.db.select().from(mcpConnections).where(byId);
    const discoveryId = await storeDiscovery(deps, created.id);
    const [after] = await deps.db.select().from(mcpConnections).where(byId);
    if (!before || !after) throw new Error("the connection row is missing");
    expect((await viewConnection(deps.db, before)).discovery).toBeNull();
    expect((await viewConnection(deps.db, after)).discovery).toMatchObject({ id: discoveryId, toolCount: 2 });
  });

  test("a refused create (alias taken) leaves no audit row; an accepted one names the stored environment id", async ({
    deps,
    owner,
  }) => {
    const path = `/environments/${owner.environmentId.toUpperCase()}/mcp-connections`;
    const body = {
      alias: "same",
      displayName: "Same",
      endpointUrl: "https://same.example.com/mcp",
      auth: { kind: "none" },
    };
    const first = (await (await owner.api.post(path, body)).json()) as { id: string };
    expect((await owner.api.post(path, body)).status).toBe(409);
    const created = await deps.db
      .select()
      .from(auditLog)
      .where(
        and(eq(auditLog.organizationId, owner.organizationId), eq(auditLog.action, "mcp_connection.created")),
      );
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ targetId: first.id, environmentId: owner.environmentId });
  });

  test("a locked write reaches no connection outside the caller's organisation and environment", async ({
    owner,
    stranger,
  }) => {
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    const created = await createConnection(owner.api, owner.environmentId, "mine");
    const change = { displayName: "Taken" };
    const foreign = await stranger.api.patch(`${path}/${created.id}`, change, { revision: 1 });
    expect(foreign.status).toBe(404);
    const elsewhere = await owner.api.patch(
      `/environments/${stranger.environmentId}/mcp-connections/${created.id}`,
      change,
      { revision: 1 },
    );
    expect(elsewhere.status).toBe(404);
    const wrongEnvironment = await owner.api.patch(
      `/environments/${randomUUID()}/mcp-connections/${created.id}`,
      change,
      { revision: 1 },
    );
    expect(wrongEnvironment.status).toBe(404);
    expect(await (await owner.api.get(`${path}/${created.id}`)).json()).toMatchObject({
      displayName: "mine",
      revision: 1,
    });
  });
});
