import { z } from "zod";
import type { AppError } from "../../../../errors.ts";
import {
  MAX_APPROVED_TOOLS,
  MAX_READY_CONNECTIONS,
  MAX_READY_TOOLS,
} from "../../../../features/connections/limits.ts";
import type { Connection } from "../../../../features/connections/schemas.ts";

// Argument names match the REST fields; every tool names its environment.
export const environmentId = z
  .uuid()
  .describe("The environment's UUID. Every tool works inside exactly one environment of your organisation.");
export const connectionId = z
  .string()
  .min(1)
  .max(64)
  .describe("The connection id (`mcp_…`), from list_mcp_connections or create_mcp_connection.");
export const revision = z
  .number()
  .int()
  .min(1)
  .max(999_999_999)
  .describe(
    "The connection's revision from your latest read (any tool result's connection.revision). A stale revision fails with revision_conflict and changes nothing.",
  );

export const connectionRef = { environmentId, connectionId };

/** The concise line every connection result starts from. */
export function describeConnection(c: Connection): string {
  const state = c.enabled ? "enabled" : "disabled";
  return `${c.alias} (${c.id}) revision ${c.revision}, ${state}, readiness ${c.readiness}. Next: ${c.nextStep}`;
}

const credentialRoute =
  "`patchbay environment mcp credential set <connectionId> --environment <environmentId> --stdin`, PUT …/mcp-connections/{connectionId}/credential on the REST API; MCP tools never accept credentials";

/** What to do about each connection error, in terms of these tools. */
export function connectionNextStep(error: AppError): string | undefined {
  const details = error.details ?? {};
  switch (error.code) {
    case "revision_conflict":
      return typeof details.currentRevision === "number"
        ? `Call get_mcp_connection, review the change, and retry with revision ${details.currentRevision}.`
        : "Call get_mcp_connection and retry with its current revision.";
    case "not_found":
      return "Call list_mcp_connections for this environmentId to find the connection (ids are per environment).";
    case "credential_required":
    case "remote_auth_failed":
      return `Attach or replace the credential through ${credentialRoute}.`;
    case "approval_required":
    case "manifest_changed":
      return "Call discover_mcp_connection_tools, review the tools, then approve_mcp_connection_tools with the new discoveryId.";
    case "discovery_stale":
      return "Call discover_mcp_connection_tools again and approve from the new discoveryId.";
    case "connection_enabled":
      return "Call set_mcp_connection_enabled with enabled=false, then repeat with the new revision.";
    case "limit_exceeded":
      return `Disable another connection or approve fewer tools (per environment at most ${MAX_READY_CONNECTIONS} ready connections and ${MAX_READY_TOOLS} ready tools; at most ${MAX_APPROVED_TOOLS} approved tools per connection).`;
    case "receipt_required":
    case "receipt_invalid":
      return "Call preview_mcp_connection_deletion with the current revision and pass its receipt to delete_mcp_connection within 5 minutes.";
    case "unknown_tool":
    case "tool_not_approvable":
      return "Approve only names the discovery lists with approvable=true.";
    case "invalid_endpoint_url":
    case "egress_blocked":
      return "Give a public https:// URL on port 443 without query, fragment or credentials, that does not redirect.";
    case "remote_unreachable":
    case "remote_timeout":
      return "Check that the server is up and reachable from the internet, then call discover_mcp_connection_tools again.";
    case "discovery_limit_exceeded":
      return "Reduce the remote server's tool catalog, then discover again.";
    case "alias_taken":
      return "Choose another alias, or find the existing connection with list_mcp_connections.";
    case "credential_not_applicable":
      return "This connection authenticates with kind none; no credential is needed.";
    default:
      return undefined;
  }
}
