import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { AppError } from "../../errors.ts";

/**
 * Maps what the SDK or egress threw to the AppError a user sees. Messages are built here
 * from the host, status numbers and JSON-RPC codes only: never the remote's own text (it can
 * echo the request, credential included), the path, or any header.
 * - egress refusals and transport failures arrive as AppErrors and pass through unchanged;
 * - HTTP 401/403 → `remote_auth_failed`; any other HTTP error, a body that is not JSON-RPC,
 *   a JSON-RPC error or an unsupported protocol version → `remote_unreachable`;
 * - the SDK's own request timeout → `remote_timeout`.
 * Anything else (a bug of ours) is returned unchanged, never disguised as a remote fault.
 */
export function toRemoteError(error: unknown, host: string, authKind: string): unknown {
  if (error instanceof AppError) return error;
  if (error instanceof StreamableHTTPError) {
    const status = error.code;
    if (status === 401 || status === 403) {
      const message =
        authKind === "none"
          ? `${host} requires authentication (HTTP ${status}); configure a credential for this connection.`
          : `${host} refused the credential (HTTP ${status}).`;
      return new AppError("remote_auth_failed", message, { remoteStatus: status });
    }
    if (status !== undefined && status >= 400) {
      return unreachable(
        `${host} answered HTTP ${status}; check that the URL is the server's MCP (Streamable HTTP) endpoint.`,
        { reason: "http_status", remoteStatus: status },
      );
    }
    return notMcp(host);
  }
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) {
      return new AppError("remote_timeout", `${host} did not answer in time.`, { phase: "request" });
    }
    if (error.code === ErrorCode.ConnectionClosed) {
      return unreachable(`${host} closed the connection.`, { reason: "network" });
    }
    return unreachable(`${host} answered with a JSON-RPC error (${error.code}).`, {
      reason: "protocol",
      rpcCode: error.code,
    });
  }
  // A 200 whose body is not JSON (SyntaxError) or not JSON-RPC (the SDK's schema check).
  if (error instanceof SyntaxError || (error instanceof Error && error.name === "ZodError"))
    return notMcp(host);
  // Client.connect throws a plain Error for this one.
  if (error instanceof Error && error.message.startsWith("Server's protocol version is not supported")) {
    return unreachable(`${host} speaks an MCP protocol version patchbay does not support.`, {
      reason: "protocol_version",
    });
  }
  return error;
}

const unreachable = (message: string, details: Record<string, unknown>) =>
  new AppError("remote_unreachable", message, details);

const notMcp = (host: string) =>
  unreachable(`${host} did not answer as an MCP server (expected JSON-RPC over Streamable HTTP).`, {
    reason: "not_mcp",
  });
