import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { version } from "../../version.ts";
import type { McpSession } from "./tool.ts";
import { registerConnectionTools } from "./tools/connections/index.ts";

const instructions = [
  'patchbay manages the remote MCP servers ("connections") its task agent may use, per environment.',
  "Lifecycle: create_mcp_connection → discover_mcp_connection_tools → approve_mcp_connection_tools →",
  "set_mcp_connection_enabled. Every change takes the connection's current `revision`; on",
  "revision_conflict, read it again with get_mcp_connection. Credentials are never accepted here.",
].join(" ");

/**
 * One server per `/mcp` request (stateless): it serves exactly one caller, whose session the
 * tools close over. Each feature registers its own tools.
 */
export function buildMcpServer(session: McpSession): McpServer {
  const server = new McpServer({ name: "patchbay", title: "patchbay", version }, { instructions });
  registerConnectionTools(server, session);
  return server;
}
