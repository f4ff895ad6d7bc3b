// Test support: `@modelcontextprotocol/server-everything` (the MCP reference server) served
// in-process in Streamable HTTP mode, with sessions, behind loopback HTTPS (mcp-https.ts).
// The package's own `streamableHttp` entry starts an Express app on a fixed port and installs
// signal handlers, so its server factory is imported instead and given SDK transports here.
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { makeTestCa, type TestCa } from "./egress-servers.ts";
import { isRecord, type McpHttps, startMcpHttps, type TestAuth } from "./mcp-https.ts";

/** The tools server-everything registers for a client without roots/sampling/elicitation. */
export const EVERYTHING_BASE_TOOLS = [
  "echo",
  "get-annotated-message",
  "get-env",
  "get-resource-links",
  "get-resource-reference",
  "get-structured-content",
  "get-sum",
  "get-tiny-image",
  "gzip-file-as-resource",
  "toggle-simulated-logging",
  "toggle-subscriber-updates",
  "trigger-long-running-operation",
] as const;

type Session = { transport: StreamableHTTPServerTransport; cleanup: (sessionId: string) => void };
type Factory = () => { server: McpServer; cleanup: (sessionId: string) => void };

// No type declarations ship with the package: load it by a computed name and check its shape.
const FACTORY_MODULE = "@modelcontextprotocol/server-everything/dist/server/index.js";

async function loadFactory(): Promise<Factory> {
  const loaded: unknown = await import(FACTORY_MODULE);
  if (!isRecord(loaded) || typeof loaded.createServer !== "function") {
    throw new Error(`${FACTORY_MODULE} has no createServer()`);
  }
  const createServer: () => unknown = loaded.createServer as () => unknown;
  return () => {
    const made = createServer();
    if (!isRecord(made) || !(made.server instanceof McpServer) || typeof made.cleanup !== "function") {
      throw new Error("server-everything's createServer() returned an unexpected shape");
    }
    const cleanup = made.cleanup as (sessionId: string) => void;
    return { server: made.server, cleanup };
  };
}

export async function startEverythingServer(
  options: { ca?: TestCa; auth?: TestAuth } = {},
): Promise<McpHttps> {
  const factory = await loadFactory();
  const sessions = new Map<string, Session>();

  const endSession = async (sessionId: string) => {
    const session = sessions.get(sessionId);
    if (!session) return;
    sessions.delete(sessionId);
    session.cleanup(sessionId);
    await session.transport.close();
  };

  return startMcpHttps({
    ca: options.ca ?? (await makeTestCa()),
    auth: options.auth,
    handle: async (req, res, body) => {
      const header = req.headers["mcp-session-id"];
      const sessionId = typeof header === "string" ? header : undefined;
      const existing = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (existing) {
        await existing.transport.handleRequest(req, res, body);
        if (req.method === "DELETE" && sessionId !== undefined) await endSession(sessionId);
        return;
      }
      if (sessionId !== undefined || req.method !== "POST" || !isInitializeRequest(body)) {
        res.writeHead(sessionId === undefined ? 400 : 404, { "content-type": "application/json" });
        res.end('{"jsonrpc":"2.0","error":{"code":-32000,"message":"No valid session"},"id":null}');
        return;
      }
      const { server, cleanup } = factory();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, { transport, cleanup });
        },
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    },
    onClose: async () => {
      for (const sessionId of [...sessions.keys()]) await endSession(sessionId);
    },
  });
}
