import { type CallToolResult, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { AppError, isAppError } from "../../errors.ts";
import type { ToolDefinition } from "../db/schema/mcp-connections.ts";
import { MAX_REMOTE_RESULT_BYTES } from "./bounds.ts";
import { createEndpointClient, type RemoteTarget } from "./endpoint-client.ts";
import { parseEndpoint } from "./endpoint-url.ts";
import { toRemoteError } from "./remote-errors.ts";
import { forEachToolPage } from "./tool-pages.ts";

/** A call failed after its request may have reached the server: it must not be retried. */
export type CallFailure = { error: AppError; ambiguous: boolean };

/**
 * A long-lived MCP session for one task and one connection: initialised once, then reused for
 * every call of that task to that connection (an initialize handshake per call would triple
 * the latency). Every request goes through egress, stays on the endpoint's origin and carries
 * the credential only as it leaves. Each call's response is capped at 1 MiB raw.
 */
export type RemoteSession = {
  host: string;
  listTools(): Promise<ToolDefinition[]>;
  /** Throws `CallFailure`-shaped AppErrors: `details.ambiguous` says whether the request may have left. */
  callTool(name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CallToolResult>;
  close(): Promise<void>;
};

export async function openRemoteSession(target: RemoteTarget): Promise<RemoteSession> {
  /** Bytes received for the request in flight; reset per call. */
  let received = 0;
  let cap = Number.POSITIVE_INFINITY;
  const host = parseEndpoint(target.endpointUrl).host;
  const { client, transport } = createEndpointClient(target, (bytes) => {
    received += bytes;
    return received > cap
      ? new AppError("egress_blocked", `${host} answered with more than ${cap} bytes.`, {
          rule: "response_too_large",
        })
      : undefined;
  });
  try {
    await client.connect(transport, { timeout: target.timeoutMs ?? 30_000 });
  } catch (error) {
    await client.close().catch(() => {});
    throw toRemoteError(error, host, target.auth.kind);
  }

  return {
    host,
    async listTools() {
      received = 0;
      cap = Number.POSITIVE_INFINITY;
      const tools: ToolDefinition[] = [];
      try {
        await forEachToolPage(client, host, (page) => {
          tools.push(...page);
        });
      } catch (error) {
        throw toRemoteError(error, host, target.auth.kind);
      }
      return tools;
    },
    async callTool(name, args, timeoutMs) {
      received = 0;
      cap = MAX_REMOTE_RESULT_BYTES;
      try {
        const result = await client.callTool({ name, arguments: args }, CallToolResultSchema, {
          timeout: timeoutMs,
          maxTotalTimeout: timeoutMs,
        });
        return result as CallToolResult;
      } catch (error) {
        const mapped = toRemoteError(error, host, target.auth.kind);
        if (!isAppError(mapped)) throw mapped;
        throw new AppError(mapped.code, mapped.message, {
          ...mapped.details,
          ambiguous: mayHaveLeft(mapped),
        });
      } finally {
        cap = Number.POSITIVE_INFINITY;
      }
    },
    async close() {
      await client.close().catch(() => {});
    },
  };
}

/**
 * Whether the outcome is unknown: the request may have reached the server and no answer came
 * back (a timeout after connecting, a connection cut mid-call, an oversized answer we stopped
 * reading). Failures before any byte left (DNS, refused, TLS, egress refusal, connect timeout)
 * and failures that are the server's own answer (HTTP status, JSON-RPC error, auth rejection)
 * are definite.
 */
function mayHaveLeft(error: AppError): boolean {
  if (error.code === "egress_blocked") return error.details?.rule === "response_too_large";
  if (error.code === "remote_timeout") return error.details?.phase !== "connect";
  if (error.code === "remote_unreachable") return error.details?.reason === "network";
  return false;
}
