import { and, eq } from "drizzle-orm";
import { describe, expect, type Tenant, test } from "../../../test/fixtures.ts";
import { callTool, connectMcp, failed, ok } from "../../../test/lib/mcp-client.ts";
import { echoTool } from "../../../test/lib/mcp-servers.ts";
import { createMemberKey } from "../../../test/lib/members.ts";
import type { Connection, Discovery } from "../../features/connections/schemas.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";

type Mutation<T> = T & { idempotencyKey: string; replayed: boolean };
type Conn = Mutation<{ connection: Connection }>;

async function keyWith(owner: Tenant, permissions: string[]): Promise<string> {
  const res = await owner.api.post("/api-keys", { name: permissions.join(","), permissions });
  expect(res.status).toBe(201);
  return ((await res.json()) as { secret: string }).secret;
}

describe("MCP tool definitions", () => {
  test("schemas describe every argument, annotations are truthful, no tool takes a credential", async ({
    app,
    owner,
  }) => {
    const client = await connectMcp(app, owner.apiKey);
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const tool of tools) {
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, { description?: string }>;
      expect(Object.keys(properties), tool.name).toContain("environmentId");
      for (const [arg, schema] of Object.entries(properties)) {
        expect(schema.description, `${tool.name}.${arg}`).toBeTruthy();
        expect(arg, tool.name).not.toMatch(/credential|secret|token|password|^value$/i);
      }
      expect(tool.inputSchema).toMatchObject({ additionalProperties: false });
      expect(tool.outputSchema, tool.name).toMatchObject({ type: "object" });
      expect(tool.description, tool.name).toBeTruthy();
      const a = tool.annotations ?? {};
      expect(typeof a.readOnlyHint, tool.name).toBe("boolean");
      expect(typeof a.openWorldHint, tool.name).toBe("boolean");
      if (!a.readOnlyHint) {
        expect(properties, tool.name).toHaveProperty("idempotencyKey");
        expect(tool.outputSchema?.properties, tool.name).toHaveProperty("idempotencyKey");
        // Preparing an upload needs the revision; polling one (requestId) does not.
        if (tool.name !== "create_mcp_connection" && tool.name !== "prepare_mcp_connection_credential_upload")
          expect(tool.inputSchema.required, tool.name).toContain("revision");
      }
    }
    for (const name of ["list_mcp_connections", "get_mcp_connection"]) {
      expect(byName.get(name)?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    }
    for (const name of ["delete_mcp_connection", "update_mcp_connection", "set_mcp_connection_enabled"]) {
      expect(byName.get(name)?.annotations, name).toMatchObject({
        readOnlyHint: false,
        destructiveHint: true,
      });
    }
    expect(byName.get("create_mcp_connection")?.annotations).toMatchObject({ destructiveHint: false });
    expect(byName.get("discover_mcp_connection_tools")?.annotations).toMatchObject({ openWorldHint: true });
    expect(byName.get("list_mcp_connections")?.inputSchema.required).toEqual(["environmentId"]);
    expect(byName.get("approve_mcp_connection_tools")?.inputSchema.required?.sort()).toEqual(
      ["connectionId", "discoveryId", "environmentId", "revision", "toolNames"].sort(),
    );

    // An undeclared argument is refused rather than silently dropped.
    const extra = await callTool(client, "list_mcp_connections", {
      environmentId: owner.environmentId,
      credential: "s3cr3t",
    });
    expect(extra.isError).toBe(true);
    await client.close();
  });
});

describe("MCP connection lifecycle through the tools only", () => {
  test("create → discover → approve → enable → ready → disable → preview → delete", async ({
    app,
    owner,
    mcp,
    deps,
  }) => {
    const server = await mcp.start({
      tools: [echoTool("search"), echoTool("lookup"), echoTool("write_note")],
    });
    const client = await connectMcp(app, owner.apiKey);
    const env = { environmentId: owner.environmentId };

    const created = await ok<Conn>(client, "create_mcp_connection", {
      ...env,
      alias: "runbooks",
      displayName: "Runbooks",
      endpointUrl: server.url,
      auth: { kind: "none" },
    });
    expect(created.connection).toMatchObject({ alias: "runbooks", revision: 1, enabled: false });
    expect(created.connection.readiness).toBe("approval_missing");
    expect(created.connection).not.toHaveProperty("endpointUrl");
    expect(created.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.replayed).toBe(false);
    // Same verb as REST: the audit row carries the generated key, as it would the header's.
    const [createdAudit] = await deps.db
      .select()
      .from(auditLog)
      .where(
        and(eq(auditLog.targetId, created.connection.id), eq(auditLog.action, "mcp_connection.created")),
      );
    expect(createdAudit?.idempotencyKey).toBe(created.idempotencyKey);

    const ref = { ...env, connectionId: created.connection.id };
    const listed = await ok<{ items: Connection[]; nextCursor: string | null }>(
      client,
      "list_mcp_connections",
      env,
    );
    expect(listed.items.map((c) => c.id)).toEqual([created.connection.id]);
    expect(listed.nextCursor).toBeNull();

    const discovered = await ok<Mutation<{ discovery: Discovery }>>(client, "discover_mcp_connection_tools", {
      ...ref,
      revision: 1,
    });
    expect(discovered.discovery.tools.map((t) => t.name).sort()).toEqual(["lookup", "search", "write_note"]);
    const line = await callTool(client, "approve_mcp_connection_tools", {
      ...ref,
      revision: 1,
      discoveryId: discovered.discovery.id,
      toolNames: ["nope"],
    });
    expect(line.content[0]).toMatchObject({ type: "text", text: expect.stringMatching(/^unknown_tool: /) });

    const approved = await ok<Conn>(client, "approve_mcp_connection_tools", {
      ...ref,
      revision: 1,
      discoveryId: discovered.discovery.id,
      toolNames: ["search", "lookup"],
    });
    expect(approved.connection).toMatchObject({
      revision: 2,
      readiness: "disabled",
      approval: { toolCount: 2 },
    });

    const enabled = await ok<Conn>(client, "set_mcp_connection_enabled", {
      ...ref,
      revision: 2,
      enabled: true,
    });
    expect(enabled.connection).toMatchObject({ revision: 3, readiness: "ready", enabled: true });
    // The REST view agrees: one verb behind both doors.
    const rest = await owner.api.get(
      `/environments/${owner.environmentId}/mcp-connections/${ref.connectionId}`,
    );
    expect(await rest.json()).toMatchObject({ revision: 3, readiness: "ready" });

    const blocked = await failed(client, "update_mcp_connection", {
      ...ref,
      revision: 3,
      endpointUrl: `${server.url}/v2`,
    });
    expect(blocked.code).toBe("connection_enabled");
    expect(blocked.text).toMatch(/set_mcp_connection_enabled with enabled=false/);

    const renamed = await ok<Conn>(client, "update_mcp_connection", {
      ...ref,
      revision: 3,
      displayName: "Books",
    });
    expect(renamed.connection).toMatchObject({ revision: 4, displayName: "Books", readiness: "ready" });
    const disabled = await ok<Conn>(client, "set_mcp_connection_enabled", {
      ...ref,
      revision: 4,
      enabled: false,
    });
    expect(disabled.connection).toMatchObject({ revision: 5, readiness: "disabled" });

    const preview = await ok<Mutation<{ preview: { receipt: string; effects: Record<string, unknown> } }>>(
      client,
      "preview_mcp_connection_deletion",
      { ...ref, revision: 5 },
    );
    expect(preview.preview.effects).toEqual({
      approvedToolCount: 2,
      credentialDestroyed: false,
      runningTasksAffected: 0,
    });
    const badReceipt = await failed(client, "delete_mcp_connection", {
      ...ref,
      revision: 5,
      receipt: "nope",
    });
    expect(badReceipt.code).toBe("receipt_invalid");
    expect(badReceipt.nextStep).toMatch(/preview_mcp_connection_deletion/);

    const deleted = await ok<Mutation<{ deleted: true; connectionId: string }>>(
      client,
      "delete_mcp_connection",
      {
        ...ref,
        revision: 5,
        receipt: preview.preview.receipt,
      },
    );
    expect(deleted).toMatchObject({ deleted: true, connectionId: ref.connectionId });
    expect(
      await deps.db.select().from(mcpConnections).where(eq(mcpConnections.id, ref.connectionId)),
    ).toEqual([]);
    expect((await failed(client, "get_mcp_connection", ref)).code).toBe("not_found");
    await client.close();
  });

  test("a stale revision is an isError revision_conflict naming the current revision", async ({
    app,
    owner,
    mcp,
  }) => {
    const server = await mcp.start();
    const client = await connectMcp(app, owner.apiKey);
    const created = await ok<Conn>(client, "create_mcp_connection", {
      environmentId: owner.environmentId,
      alias: "conflict",
      displayName: "Conflict",
      endpointUrl: server.url,
      auth: { kind: "none" },
    });
    const ref = { environmentId: owner.environmentId, connectionId: created.connection.id };
    await ok<Conn>(client, "update_mcp_connection", { ...ref, revision: 1, displayName: "Second" });

    const result = await callTool(client, "update_mcp_connection", {
      ...ref,
      revision: 1,
      displayName: "Third",
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    const error = await failed(client, "update_mcp_connection", {
      ...ref,
      revision: 1,
      displayName: "Third",
    });
    expect(error).toMatchObject({ code: "revision_conflict", currentRevision: 2 });
    expect(error.requestId).toMatch(/^req_/);
    expect(error.text).toMatch(/^revision_conflict: .*call get_mcp_connection.*revision 2/i);
    const current = await ok<{ connection: Connection }>(client, "get_mcp_connection", ref);
    expect(current.connection).toMatchObject({ revision: 2, displayName: "Second" });
    await client.close();
  });

  test("idempotencyKey: the same call replays, another call with the key is refused", async ({
    app,
    owner,
    mcp,
    deps,
  }) => {
    const server = await mcp.start();
    const client = await connectMcp(app, owner.apiKey);
    const args = {
      environmentId: owner.environmentId,
      alias: "once",
      displayName: "Once",
      endpointUrl: server.url,
      auth: { kind: "none" },
      idempotencyKey: "mcp-create-once",
    };
    const first = await ok<Conn>(client, "create_mcp_connection", args);
    const again = await callTool(client, "create_mcp_connection", args);
    expect(again.structuredContent).toEqual({ ...first, replayed: true });
    expect(again.content[0]).toMatchObject({ text: expect.stringMatching(/mcp-create-once, replayed/) });
    const rows = await deps.db.select().from(mcpConnections).where(eq(mcpConnections.alias, "once"));
    expect(rows).toHaveLength(1);

    const reused = await failed(client, "create_mcp_connection", { ...args, alias: "twice" });
    expect(reused.code).toBe("idempotency_key_reused");
    // The key's namespace is shared with REST: a REST request cannot reuse it either.
    const restReuse = await owner.api.post(
      `/environments/${owner.environmentId}/mcp-connections`,
      { alias: "once", displayName: "Once", endpointUrl: server.url, auth: { kind: "none" } },
      { idempotencyKey: "mcp-create-once" },
    );
    expect(restReuse.status).toBe(422);

    // A failed call releases its key: fixing the call and retrying with the same key works.
    const ref = { environmentId: owner.environmentId, connectionId: first.connection.id };
    const stale = await failed(client, "set_mcp_connection_enabled", {
      ...ref,
      revision: 9,
      enabled: false,
      idempotencyKey: "retry-me",
    });
    expect(stale.code).toBe("revision_conflict");
    const fixed = await ok<Conn>(client, "update_mcp_connection", {
      ...ref,
      revision: 1,
      displayName: "Renamed",
      idempotencyKey: "retry-me",
    });
    expect(fixed).toMatchObject({ idempotencyKey: "retry-me", replayed: false, connection: { revision: 2 } });
    await client.close();
  });
});

describe("MCP authorisation and tenancy", () => {
  test("a read-only key lists and reads, and every write tool is refused", async ({ app, owner, mcp }) => {
    const server = await mcp.start();
    const created = await owner.api.post(`/environments/${owner.environmentId}/mcp-connections`, {
      alias: "ro",
      displayName: "RO",
      endpointUrl: server.url,
      auth: { kind: "none" },
    });
    const conn = (await created.json()) as Connection;
    const ref = { environmentId: owner.environmentId, connectionId: conn.id };
    const client = await connectMcp(app, await keyWith(owner, ["mcp_connections:read"]));

    const page = await ok<{ items: Connection[] }>(client, "list_mcp_connections", {
      environmentId: owner.environmentId,
    });
    expect(page.items).toHaveLength(1);
    expect((await ok<{ connection: Connection }>(client, "get_mcp_connection", ref)).connection.id).toBe(
      conn.id,
    );
    const writes: [string, Record<string, unknown>][] = [
      [
        "create_mcp_connection",
        {
          environmentId: owner.environmentId,
          alias: "x",
          displayName: "X",
          endpointUrl: server.url,
          auth: { kind: "none" },
        },
      ],
      ["update_mcp_connection", { ...ref, revision: 1, displayName: "Y" }],
      ["discover_mcp_connection_tools", { ...ref, revision: 1 }],
      ["approve_mcp_connection_tools", { ...ref, revision: 1, discoveryId: "dsc_x", toolNames: ["echo"] }],
      ["set_mcp_connection_enabled", { ...ref, revision: 1, enabled: true }],
      ["preview_mcp_connection_deletion", { ...ref, revision: 1 }],
      ["delete_mcp_connection", { ...ref, revision: 1, receipt: "r" }],
    ];
    for (const [name, args] of writes) {
      const error = await failed(client, name, args);
      expect(error, name).toMatchObject({ code: "forbidden", requiredPermission: "mcp_connections:manage" });
    }
    expect(server.requests).toHaveLength(0);
    const after = await owner.api.get(`/environments/${owner.environmentId}/mcp-connections/${conn.id}`);
    expect(await after.json()).toMatchObject({ revision: 1, displayName: "RO" });
    await client.close();
  });

  test("a manage-only key may read too (write implies read)", async ({ app, owner }) => {
    const client = await connectMcp(app, await keyWith(owner, ["mcp_connections:manage"]));
    const page = await ok<{ items: Connection[] }>(client, "list_mcp_connections", {
      environmentId: owner.environmentId,
    });
    expect(page.items).toEqual([]);
    await client.close();
  });

  test("another organisation's environment and connection are not_found", async ({
    app,
    owner,
    stranger,
    mcp,
  }) => {
    const server = await mcp.start();
    const mine = await connectMcp(app, owner.apiKey);
    const created = await ok<Conn>(mine, "create_mcp_connection", {
      environmentId: owner.environmentId,
      alias: "private",
      displayName: "Private",
      endpointUrl: server.url,
      auth: { kind: "none" },
    });
    const theirs = await connectMcp(app, stranger.apiKey);
    const ref = { environmentId: owner.environmentId, connectionId: created.connection.id };
    expect((await failed(theirs, "list_mcp_connections", { environmentId: owner.environmentId })).code).toBe(
      "not_found",
    );
    expect((await failed(theirs, "get_mcp_connection", ref)).code).toBe("not_found");
    const toggle = await failed(theirs, "set_mcp_connection_enabled", { ...ref, revision: 1, enabled: true });
    expect(toggle.code).toBe("not_found");
    // Their own environment does not reveal it either.
    const crossEnv = await failed(theirs, "get_mcp_connection", {
      environmentId: stranger.environmentId,
      connectionId: created.connection.id,
    });
    expect(crossEnv.code).toBe("not_found");
    expect(crossEnv.message).not.toContain("Private");
    await mine.close();
    await theirs.close();
  });
  test("a stored tool result goes back only to the credential that got it", async ({ app, owner, deps }) => {
    const memberKey = await createMemberKey(deps, app, owner);
    const ownerClient = await connectMcp(app, owner.apiKey);
    const memberClient = await connectMcp(app, memberKey.key);
    const args = {
      environmentId: owner.environmentId,
      alias: "mcp-one",
      displayName: "One",
      endpointUrl: "https://mcp.example.com/secret-path/mcp",
      auth: { kind: "bearer" },
      idempotencyKey: "mcp-k1",
    };
    // A member may not manage connections: a replay of the owner's result would hand it over.
    expect(
      (await failed(memberClient, "create_mcp_connection", { ...args, idempotencyKey: "own" })).code,
    ).toBe("forbidden");
    await ok<Conn>(ownerClient, "create_mcp_connection", args);
    const replay = await failed(memberClient, "create_mcp_connection", args);
    expect(replay.code).toBe("idempotency_key_reused");
    expect((await callTool(ownerClient, "create_mcp_connection", args)).structuredContent).toMatchObject({
      replayed: true,
    });
    await memberClient.close();
    await ownerClient.close();
  });
});
