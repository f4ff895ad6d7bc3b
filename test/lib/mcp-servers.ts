// Test support: real MCP servers (the official SDK's low-level Server over its Streamable
// HTTP transport, stateless, JSON responses) behind loopback HTTPS with the throwaway CA.
// The tool list, page size and auth can change at runtime (drift tests); every request is
// logged (see mcp-https.ts). Reach them through egress with `devPolicy(server.ca, [server.port])`.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  type ListToolsResult,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { makeTestCa, type TestCa } from "./egress-servers.ts";
import { type McpHttps, startMcpHttps, type TestAuth } from "./mcp-https.ts";

export type { RecordedRequest, TestAuth } from "./mcp-https.ts";

export type ToolHandler = (
  args: Record<string, unknown>,
  context: { signal: AbortSignal },
) => CallToolResult | Promise<CallToolResult>;

export type TestTool = {
  /** Listed exactly as given, so a test can send anything a hostile server could. */
  definition: { name: string } & Record<string, unknown>;
  /** `tools/call` behaviour; default: echo. */
  handler?: ToolHandler;
};

export type McpServerOptions = {
  /** Default: a fresh throwaway CA. Share one across servers to share one egress policy. */
  ca?: TestCa;
  tools?: TestTool[];
  /** Tools per `tools/list` page (cursor = offset); default: all on one page. */
  pageSize?: number;
  auth?: TestAuth;
  /** Status for a missing or wrong credential; default 401. */
  rejectStatus?: 401 | 403;
  /** Delay before answering each `tools/list`. */
  listDelayMs?: number;
};

export type McpTestServer = McpHttps & {
  setTools(tools: TestTool[]): void;
  setPageSize(pageSize: number | undefined): void;
  tools(): TestTool[];
};

const echo: ToolHandler = (args) => ({
  content: [{ type: "text", text: JSON.stringify(args) }],
  structuredContent: args,
});

/**
 * A small valid tool answering with its arguments (text and structuredContent). Annotated
 * read-only, as it is, so the task agent may call it on its own; `extra` may say otherwise.
 */
export function echoTool(name = "echo", extra: Record<string, unknown> = {}): TestTool {
  return {
    definition: {
      name,
      description: `Echoes its arguments (${name}).`,
      inputSchema: { type: "object", properties: { text: { type: "string" } } },
      annotations: { readOnlyHint: true },
      ...extra,
    },
    handler: echo,
  };
}

/** A tool that claims to change the server's state (`destructiveHint`): a `write` tool once approved. */
export const destructiveTool = (name = "drop_database"): TestTool =>
  echoTool(name, { annotations: { readOnlyHint: false, destructiveHint: true } });

/** Waits `ms` (or until the call is cancelled), then echoes. */
export function slowTool(ms: number, name = "slow"): TestTool {
  return {
    definition: {
      name,
      description: `Answers after ${ms} ms.`,
      inputSchema: { type: "object" },
      annotations: { readOnlyHint: true },
    },
    handler: async (args, { signal }) => {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      return echo(args, { signal });
    },
  };
}

/** `count` realistic small tools named `<prefix>-0001`…, each with a two-field schema. */
export function manyTools(count: number, prefix = "tool"): TestTool[] {
  return Array.from({ length: count }, (_, i) =>
    echoTool(`${prefix}-${String(i + 1).padStart(4, "0")}`, {
      title: `Tool ${i + 1}`,
      description: `Looks up record ${i + 1} in the inventory and returns its current state.`,
      inputSchema: {
        type: "object",
        properties: {
          id: { type: "string", description: "Record identifier" },
          verbose: { type: "boolean", default: false },
        },
        required: ["id"],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    }),
  );
}

export async function startMcpServer(options: McpServerOptions = {}): Promise<McpTestServer> {
  let tools = options.tools ?? [echoTool()];
  let pageSize = options.pageSize;

  const handle = async (...[req, res, body]: Parameters<Parameters<typeof startMcpHttps>[0]["handle"]>) => {
    // Stateless: no sessions, so no standalone SSE stream and nothing to delete.
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end();
      return;
    }
    const server = mcpServer(
      () => tools,
      () => pageSize,
      options.listDelayMs ?? 0,
    );
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const https = await startMcpHttps({
    ca: options.ca ?? (await makeTestCa()),
    auth: options.auth,
    rejectStatus: options.rejectStatus,
    handle,
  });
  return {
    ...https,
    setTools: (next) => {
      tools = next;
    },
    setPageSize: (next) => {
      pageSize = next;
    },
    tools: () => tools,
  };
}

function mcpServer(tools: () => TestTool[], pageSize: () => number | undefined, listDelayMs: number): Server {
  const server = new Server(
    { name: "patchbay-test", version: "1.0.0" },
    { capabilities: { tools: { listChanged: true } } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    if (listDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, listDelayMs));
    const all = tools();
    const size = pageSize() ?? all.length;
    const cursor = request.params?.cursor;
    const offset = cursor === undefined ? 0 : Number(cursor);
    if (!Number.isInteger(offset) || offset < 0) throw new McpError(ErrorCode.InvalidParams, "bad cursor");
    const next = offset + size;
    // Deliberately unvalidated: definitions go out exactly as the test wrote them.
    return {
      tools: all.slice(offset, next).map((tool) => tool.definition),
      ...(next < all.length ? { nextCursor: String(next) } : {}),
    } as unknown as ListToolsResult;
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools().find((candidate) => candidate.definition.name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return (tool.handler ?? echo)(request.params.arguments ?? {}, { signal: extra.signal });
  });
  return server;
}
