import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { callTool, connectMcp, MCP_URL } from "../../../test/lib/mcp-client.ts";
import { ERROR_META_KEY } from "./tool-errors.ts";

type Property = { type?: string | string[]; format?: string };

describe("MCP tools with malformed arguments", () => {
  test("NUL, a lone surrogate or oversized text in any string argument is a tool error with a code, never internal", async ({
    app,
    owner,
  }) => {
    const client = await connectMcp(app, owner.apiKey);
    const { tools } = await client.listTools();
    const failures: string[] = [];
    let calls = 0;
    for (const tool of tools) {
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, Property>;
      const strings = Object.entries(properties)
        .filter(([, p]) => p.type === "string" || (Array.isArray(p.type) && p.type.includes("string")))
        .map(([name]) => name);
      // Plausible values for every required argument, so the bad one is what is judged.
      const base: Record<string, unknown> = {};
      for (const name of tool.inputSchema.required ?? []) {
        base[name] = name === "environmentId" ? owner.environmentId : crypto.randomUUID();
      }
      for (const name of strings) {
        for (const bad of ["a\u0000b", "\u0000", "\ud800", "a\udc00b", "x".repeat(100_000)]) {
          calls++;
          const result = await callTool(client, tool.name, { ...base, [name]: bad });
          const code = (result._meta?.[ERROR_META_KEY] as { code?: string } | undefined)?.code;
          const text = result.content[0]?.type === "text" ? result.content[0].text : "";
          // The SDK's own schema check answers in text (no code); anything else must carry one.
          const schemaRefusal = /Input validation error|Invalid arguments/i.test(text);
          if (result.isError && (code === "internal" || (!code && !schemaRefusal))) {
            failures.push(`${tool.name}.${name}=${JSON.stringify(bad).slice(0, 20)}: ${text.slice(0, 160)}`);
          }
        }
      }
    }
    expect(calls).toBeGreaterThan(20);
    expect(failures).toEqual([]);
  });
});

const needsName = "tools/call needs params.name, a string: the name of a tool from tools/list.";
const needsObject = "tools/call's params.arguments must be an object mapping argument names to values.";

/** Requests a client can get wrong, each with the -32602 message it must get back. */
const malformed: { label: string; method: string; params?: unknown; message: string | RegExp }[] = [
  { label: "tools/call without params", method: "tools/call", message: needsName },
  { label: "tools/call without a name", method: "tools/call", params: { arguments: {} }, message: needsName },
  { label: "tools/call with a numeric name", method: "tools/call", params: { name: 5 }, message: needsName },
  {
    label: "arguments an array",
    method: "tools/call",
    params: { name: "list_mcp_connections", arguments: [1] },
    message: needsObject,
  },
  {
    label: "arguments a string",
    method: "tools/call",
    params: { name: "list_mcp_connections", arguments: "environmentId=x" },
    message: needsObject,
  },
  {
    label: "arguments null",
    method: "tools/call",
    params: { name: "list_mcp_connections", arguments: null },
    message: needsObject,
  },
  {
    label: "an unknown tool",
    method: "tools/call",
    params: { name: "no_such_tool", arguments: {} },
    message: "Unknown tool: no_such_tool (tools/list lists this server's tools).",
  },
  {
    label: "initialize without params",
    method: "initialize",
    message: /^Invalid params for initialize: params: /,
  },
  {
    label: "initialize without clientInfo",
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {} },
    message: /^Invalid params for initialize: params\.clientInfo: /,
  },
  {
    label: "tools/list with a numeric cursor",
    method: "tools/list",
    params: { cursor: 5 },
    message: /^Invalid params for tools\/list: params\.cursor: /,
  },
];

describe("malformed JSON-RPC requests", () => {
  const post = (
    app: { request(url: string, init: RequestInit): Response | Promise<Response> },
    key: string,
    body: unknown,
  ) =>
    app.request(MCP_URL, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify(body),
    });

  test("are -32602 invalid params with one short sentence, never -32603 or a validation dump", async ({
    app,
    owner,
  }) => {
    for (const [id, request] of malformed.entries()) {
      const res = await post(app, owner.apiKey, {
        jsonrpc: "2.0",
        id,
        method: request.method,
        params: request.params,
      });
      expect(res.status, request.label).toBe(200);
      const body = (await res.json()) as { id: number; error?: { code: number; message: string } };
      expect(body.id, request.label).toBe(id);
      expect(body.error?.code, request.label).toBe(-32602);
      const message = body.error?.message ?? "";
      expect(message, request.label).toMatch(request.message);
      expect(message.length, request.label).toBeLessThan(120);
      expect(message, request.label).not.toMatch(/\n|invalid_type|"path"/);
    }
  });

  test("in a batch, only the malformed request is refused", async ({ app, owner }) => {
    const res = await post(app, owner.apiKey, [
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: {} },
      { jsonrpc: "2.0", id: 2, method: "ping" },
    ]);
    expect(await res.json()).toEqual([
      { jsonrpc: "2.0", id: 1, error: { code: -32602, message: needsName } },
      { jsonrpc: "2.0", id: 2, result: {} },
    ]);
  });

  test("a batch that cancels its own request is still answered in full", async ({ app, owner }) => {
    const res = await Promise.race([
      post(app, owner.apiKey, [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "list_mcp_connections", arguments: { environmentId: owner.environmentId } },
        },
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } },
      ]),
      // Before the guard ignored cancellations this POST never got an answer at all; the wait
      // only bounds how long the test takes to say so (an answer comes in milliseconds).
      new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), 15_000)),
    ]);
    expect(res).not.toBe("hung");
    expect(await (res as Response).json()).toMatchObject({
      id: 1,
      result: { structuredContent: { items: [], nextCursor: null } },
    });
  });

  test("a batch that repeats a request id runs and answers the first request only", async ({
    app,
    owner,
  }) => {
    const create = (alias: string) => ({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: {
        name: "create_mcp_connection",
        arguments: {
          environmentId: owner.environmentId,
          alias,
          displayName: alias,
          endpointUrl: "https://mcp.example.com/mcp",
          auth: { kind: "none" },
        },
      },
    });
    const res = await post(app, owner.apiKey, [create("first"), create("second")]);
    // One answer, which the transport sends as it is, not in an array.
    expect(await res.json()).toMatchObject({
      id: 7,
      result: { structuredContent: { connection: { alias: "first" } } },
    });
    // The second was never run: one connection exists.
    const listed = await post(app, owner.apiKey, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "list_mcp_connections", arguments: { environmentId: owner.environmentId } },
    });
    const list = (await listed.json()) as { result: { structuredContent: { items: { alias: string }[] } } };
    expect(list.result.structuredContent.items.map((c) => c.alias)).toEqual(["first"]);
  });

  test("a task-augmented tools/call runs as a plain call: the server declares no tasks capability", async ({
    app,
    owner,
  }) => {
    const res = await post(app, owner.apiKey, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "list_mcp_connections",
        arguments: { environmentId: owner.environmentId },
        task: { ttl: 60_000 },
      },
    });
    const body = (await res.json()) as { result?: { structuredContent?: unknown }; error?: unknown };
    expect(body.error).toBeUndefined();
    expect(body.result?.structuredContent).toEqual({ items: [], nextCursor: null });
  });

  test("the official SDK client sees an unknown tool as a -32602 protocol error", async ({ app, owner }) => {
    const client = await connectMcp(app, owner.apiKey);
    const error = await client.callTool({ name: "no_such_tool", arguments: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: -32602 });
    expect((error as McpError).message).toContain("Unknown tool: no_such_tool");
    await client.close();
  });
});
