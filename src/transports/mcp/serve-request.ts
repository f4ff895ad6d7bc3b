import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { MemberActor } from "../../actor.ts";
import type { ServiceContext } from "../../context.ts";
import { lazyValidator } from "../../platform/mcp-client/lazy-validator.ts";
import { version } from "../../version.ts";
import { MAX_API_BODY_BYTES } from "../http/api-guards.ts";
import { callerAuthInfo } from "./caller.ts";
import type { McpPost } from "./request-body.ts";
import { guardRequests } from "./request-guard.ts";
import { connectionTools } from "./tools/connections/index.ts";

const toolNames = new Set(connectionTools.map((t) => t.name));

const instructions = [
  'patchbay manages the remote MCP servers ("connections") its task agent may use, per environment.',
  "Lifecycle: create_mcp_connection → discover_mcp_connection_tools → approve_mcp_connection_tools →",
  "set_mcp_connection_enabled. Every change takes the connection's current `revision`; on",
  "revision_conflict, read it again with get_mcp_connection. Credentials are never accepted here.",
].join(" ");

/**
 * Each server would otherwise build an Ajv instance with its meta-schemas (about a tenth
 * of a `tools/call`'s CPU) to validate elicitation forms, which patchbay never sends.
 */
const jsonSchemaValidator = lazyValidator();

/**
 * Idle servers, each with every tool registered once. A `Protocol` serves one transport at a
 * time, so each request takes a server of its own, connects its fresh transport, and gives the
 * server back after `close()` (which the SDK supports: connect() again after it). The caller never
 * lives on a server — it travels with the request (caller.ts) — so whom a pooled server last
 * served cannot matter to the next request.
 */
const idle: McpServer[] = [];
/** Servers of answered requests on their way back to the pool. */
let releasing = 0;
/** Past about the number of requests in flight at once, an idle server is only memory. */
const MAX_IDLE = 64;

function buildServer(): McpServer {
  const server = new McpServer(
    { name: "patchbay", title: "patchbay", version },
    { instructions, jsonSchemaValidator },
  );
  for (const tool of connectionTools) tool.register(server);
  // Claim only what is delivered. registerTool sets `tools.listChanged: true` regardless of the
  // options (modelcontextprotocol/typescript-sdk#1488), but a stateless server with no GET
  // stream can never send notifications/tools/list_changed. The tool list is fixed anyway.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  return server;
}

/**
 * Answers one authenticated, admitted POST to /mcp (stateless, JSON responses) for `ctx` alone:
 * every handler of the request reads its caller from the request's `authInfo`.
 */
export async function serveMcpRequest(post: McpPost, ctx: ServiceContext<MemberActor>): Promise<Response> {
  const server = idle.pop() ?? buildServer();
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MAX_API_BODY_BYTES,
  });
  let response: Response;
  try {
    await server.connect(transport);
    guardRequests(transport, toolNames);
    const authInfo = callerAuthInfo(ctx);
    const options = post.json ? { authInfo, parsedBody: post.json.value } : { authInfo };
    // In JSON mode this resolves once every response of the request is ready.
    response = await transport.handleRequest(post.request, options);
  } catch (error) {
    // Handlers may still be running (close() aborts them; they answer nobody): never lent again.
    await server.close();
    throw error;
  }
  // Released once this turn's promise jobs have run: each handler has then also dropped its
  // abort controller, which close() would otherwise abort (an AbortError built per request).
  releasing++;
  setImmediate(() =>
    release(server)
      .catch((error: unknown) => ctx.deps.logger.warn({ err: error }, "MCP server not released"))
      .finally(() => releasing--),
  );
  return response;
}

/** How many servers of answered requests are not yet back in the pool (or dropped). */
export const serversInRelease = (): number => releasing;

/**
 * Closes the server's connection and lends it again, unless an `initialize` left its client's
 * capabilities and name on it: the SDK cannot clear them, and no caller may inherit another's.
 */
async function release(server: McpServer): Promise<void> {
  await server.close();
  if (server.server.getClientCapabilities() === undefined && idle.length < MAX_IDLE) idle.push(server);
}
