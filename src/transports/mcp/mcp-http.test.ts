import { describe, expect, test } from "../../../test/fixtures.ts";
import { problem } from "../../../test/http.ts";
import { connectMcp, MCP_URL } from "../../../test/lib/mcp-client.ts";

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const jsonRpcHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" };

async function keyWith(
  owner: { api: { post(path: string, body: unknown): Promise<Response> } },
  permissions: string[],
) {
  const res = await owner.api.post("/api-keys", { name: permissions.join(",") || "none", permissions });
  expect(res.status).toBe(201);
  return ((await res.json()) as { secret: string }).secret;
}

describe("/mcp transport and authentication", () => {
  test("no credential is 401 with an RFC 9728 resource_metadata challenge", async ({ app, deps }) => {
    const res = await app.request(MCP_URL, {
      method: "POST",
      headers: jsonRpcHeaders,
      body: JSON.stringify(initialize),
    });
    expect(res.status).toBe(401);
    const metadataUrl = `${deps.config.baseUrl}/.well-known/oauth-protected-resource/mcp`;
    expect(res.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${metadataUrl}"`);
    expect((await problem(res)).code).toBe("unauthorized");

    const bad = await app.request(MCP_URL, {
      method: "POST",
      headers: { ...jsonRpcHeaders, authorization: "Bearer sk_not_a_real_key" },
      body: JSON.stringify(initialize),
    });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toBe(
      `Bearer error="invalid_token", resource_metadata="${metadataUrl}"`,
    );
  });

  test("the protected-resource metadata names the resource and the MCP scopes", async ({ app, deps }) => {
    const res = await app.request("/.well-known/oauth-protected-resource/mcp");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      resource: `${deps.config.baseUrl}/mcp`,
      authorization_servers: [deps.config.baseUrl],
      scopes_supported: ["patchbay.mcp.read", "patchbay.mcp.write"],
      bearer_methods_supported: ["header"],
      resource_name: "patchbay MCP server",
    });
  });

  test("GET and DELETE are 405 with Allow: POST (stateless: no stream, no session)", async ({
    app,
    owner,
  }) => {
    for (const method of ["GET", "DELETE"]) {
      const res = await app.request(MCP_URL, {
        method,
        headers: { authorization: `Bearer ${owner.apiKey}`, accept: "text/event-stream" },
      });
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      expect((await problem(res)).code).toBe("method_not_allowed");
    }
  });

  test("initialize answers JSON without a session id", async ({ app, owner }) => {
    const res = await app.request(MCP_URL, {
      method: "POST",
      headers: { ...jsonRpcHeaders, authorization: `Bearer ${owner.apiKey}` },
      body: JSON.stringify(initialize),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("mcp-session-id")).toBeNull();
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    const body = (await res.json()) as { result: { serverInfo: { name: string }; capabilities: object } };
    expect(body.result.serverInfo.name).toBe("patchbay");
    // Tools only, and no list_changed promise: a stateless server has no stream to send it on.
    expect(body.result.capabilities).toEqual({ tools: { listChanged: false } });
  });

  test("stateless: a tools/call needs no prior initialize (one POST, one answer)", async ({ app, owner }) => {
    const res = await app.request(MCP_URL, {
      method: "POST",
      headers: {
        ...jsonRpcHeaders,
        authorization: `Bearer ${owner.apiKey}`,
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "list_mcp_connections", arguments: { environmentId: owner.environmentId } },
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      id: number;
      result: { structuredContent: unknown; isError?: boolean };
    };
    expect(body.id).toBe(7);
    expect(body.result.isError).toBeUndefined();
    expect(body.result.structuredContent).toEqual({ items: [], nextCursor: null });
  });

  test("a key without any MCP connection permission is 403", async ({ app, owner }) => {
    const key = await keyWith(owner, ["environments:read"]);
    const res = await app.request(MCP_URL, {
      method: "POST",
      headers: { ...jsonRpcHeaders, authorization: `Bearer ${key}` },
      body: JSON.stringify(initialize),
    });
    expect(res.status).toBe(403);
    expect(await problem(res)).toMatchObject({
      code: "forbidden",
      requiredPermission: "mcp_connections:read",
    });
  });

  test("the official SDK client connects, lists exactly the eleven tools and calls one", async ({
    app,
    owner,
  }) => {
    const client = await connectMcp(app, owner.apiKey);
    expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: false } });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "approve_mcp_connection_tools",
      "create_mcp_connection",
      "delete_mcp_connection",
      "discover_mcp_connection_tools",
      "get_mcp_connection",
      "list_mcp_connections",
      "list_task_call_approvals",
      "prepare_mcp_connection_credential_upload",
      "preview_mcp_connection_deletion",
      "set_mcp_connection_enabled",
      "update_mcp_connection",
    ]);
    const result = await client.callTool({
      name: "list_mcp_connections",
      arguments: { environmentId: owner.environmentId },
    });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ items: [], nextCursor: null });
    await client.close();
  });
});
