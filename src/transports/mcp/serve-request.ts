import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { MemberActor } from "../../actor.ts";
import type { ServiceContext } from "../../context.ts";
import { lazyValidator } from "../../platform/mcp-client/lazy-validator.ts";
import { version } from "../../version.ts";
import { MAX_API_BODY_BYTES } from "../http/api-guards.ts";
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
 * Each request's server would otherwise build an Ajv instance with its meta-schemas (about a tenth
 * of a `tools/call`'s CPU) to validate elicitation forms, which patchbay never sends.
 */
const jsonSchemaValidator = lazyValidator();

/**
 * Answers one authenticated, admitted POST to /mcp: a server of its own (stateless), serving
 * exactly this caller, with JSON responses.
 */
export async function serveMcpRequest(request: Request, ctx: ServiceContext<MemberActor>): Promise<Response> {
  const server = new McpServer(
    { name: "patchbay", title: "patchbay", version },
    { instructions, jsonSchemaValidator },
  );
  for (const tool of connectionTools) tool.register(server, ctx);
  // Claim only what is delivered. registerTool sets `tools.listChanged: true` regardless of the
  // options (modelcontextprotocol/typescript-sdk#1488), but a stateless server with no GET
  // stream can never send notifications/tools/list_changed. The tool list is fixed anyway.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MAX_API_BODY_BYTES,
  });
  try {
    await server.connect(transport);
    guardRequests(transport, toolNames);
    // In JSON mode this resolves once every response of the request is ready.
    return await transport.handleRequest(request);
  } finally {
    await server.close();
  }
}
