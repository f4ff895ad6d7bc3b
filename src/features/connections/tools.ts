import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { McpSession, RegistrableTool } from "../../mcp/tool.ts";
import { createConnectionTool, updateConnectionTool } from "./tools/configure.ts";
import { deleteConnectionTool, previewConnectionDeletionTool } from "./tools/delete.ts";
import { getConnectionTool, listConnectionsTool } from "./tools/read.ts";
import {
  approveConnectionToolsTool,
  discoverConnectionToolsTool,
  setConnectionEnabledTool,
} from "./tools/review.ts";

/**
 * The inbound MCP management tools (spec 4C). Each calls the same verb as its REST route.
 * `prepare_mcp_connection_credential_upload` needs the web UI's signed-in owner and comes
 * with it (issue 6); until then credentials are set through REST or the UI.
 */
export const connectionTools: readonly RegistrableTool[] = [
  listConnectionsTool,
  getConnectionTool,
  createConnectionTool,
  updateConnectionTool,
  discoverConnectionToolsTool,
  approveConnectionToolsTool,
  setConnectionEnabledTool,
  previewConnectionDeletionTool,
  deleteConnectionTool,
];

export function registerConnectionTools(server: McpServer, session: McpSession): void {
  for (const tool of connectionTools) tool.register(server, session);
}
