import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { McpSession, RegistrableTool } from "../../tool.ts";
import { createConnectionTool, updateConnectionTool } from "./configure.ts";
import { prepareCredentialUploadTool } from "./credential-upload.ts";
import { deleteConnectionTool, previewConnectionDeletionTool } from "./delete.ts";
import { getConnectionTool, listConnectionsTool } from "./read.ts";
import {
  approveConnectionToolsTool,
  discoverConnectionToolsTool,
  setConnectionEnabledTool,
} from "./review.ts";

/**
 * The inbound MCP management tools (spec 4C). Each calls the same verb as its REST route;
 * `prepare_mcp_connection_credential_upload` hands the credential step to the web UI, where the
 * signed-in owner types it (no tool accepts a credential).
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
  prepareCredentialUploadTool,
];

export function registerConnectionTools(server: McpServer, session: McpSession): void {
  for (const tool of connectionTools) tool.register(server, session);
}
