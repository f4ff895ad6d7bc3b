import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
  ListToolsRequestSchema,
  PingRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

/** The requests this server answers, with the SDK's own schema for each. */
const served = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
} as const;

/**
 * Answers a client's malformed request the way JSON-RPC and the MCP tools spec ask: -32602
 * (invalid params) with one short sentence. The SDK (1.x) parses params inside the handler and
 * turns the ZodError into -32603 with the whole issue list as the message
 * (modelcontextprotocol/typescript-sdk#2284), and answers an unknown tool with an `isError`
 * result where the spec has a protocol error ("Unknown tool: …", -32602). Checked here, between
 * the transport and the server, every message still reaches the SDK unless refused.
 *
 * `params.task` is dropped: the server declares no `tasks` capability, and the tasks spec says such
 * a receiver processes the request normally, ignoring it (the SDK would refuse it with -32603).
 *
 * A request whose id an earlier request of the same POST already has is not run: MCP forbids
 * reusing an id, the transport answers each id once, and it would answer the POST — and the
 * server go back to the pool — while the second handler still ran. The first is answered.
 */
export function guardRequests(transport: Transport, tools: ReadonlySet<string>): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error("guardRequests runs after server.connect(transport)");
  const ids = new Set<string | number>();
  transport.onmessage = (message: JSONRPCMessage, extra) => {
    // Stateless, a cancellation can only name a request of the same POST, and the SDK answers a
    // cancelled request with nothing: the POST (JSON mode) would then wait forever, holding its
    // server and a load-shedding slot. The spec lets a receiver ignore cancellations; this one does.
    // Told by shape (the transport validated the message; the SDK's type guards are Zod parses).
    if ("method" in message && !("id" in message) && message.method === "notifications/cancelled") return;
    if (!isJSONRPCRequest(message)) return deliver(message, extra);
    if (ids.has(message.id)) return;
    ids.add(message.id);
    const request = withoutTask(message);
    const refusal = invalidParams(request, tools);
    if (refusal === undefined) return deliver(request, extra);
    // The transport pairs the answer with its request by id, as it does the SDK's own.
    transport
      .send({ jsonrpc: "2.0", id: request.id, error: { code: ErrorCode.InvalidParams, message: refusal } })
      .catch((error: unknown) =>
        transport.onerror?.(error instanceof Error ? error : new Error(String(error))),
      );
  };
}

function withoutTask(request: JSONRPCRequest): JSONRPCRequest {
  if (request.params === undefined || !("task" in request.params)) return request;
  const { task: _ignored, ...params } = request.params;
  return { ...request, params };
}

/** Why the request's params are unusable, in one sentence; undefined when they are fine. */
function invalidParams(request: JSONRPCRequest, tools: ReadonlySet<string>): string | undefined {
  if (!Object.hasOwn(served, request.method)) return undefined; // the SDK answers -32601
  const method = request.method as keyof typeof served;
  const parsed = served[method].safeParse(request);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.map(String).join(".") ?? "params";
    if (method === "tools/call" && (path === "params" || path === "params.name")) {
      return "tools/call needs params.name, a string: the name of a tool from tools/list.";
    }
    if (method === "tools/call" && path.startsWith("params.arguments")) {
      return "tools/call's params.arguments must be an object mapping argument names to values.";
    }
    return `Invalid params for ${method}: ${path}: ${issue?.message ?? "not the shape the method takes"}.`;
  }
  if (parsed.data.method === "tools/call" && !tools.has(parsed.data.params.name)) {
    const name = parsed.data.params.name;
    const shown = name.length > 80 ? `${name.slice(0, 80)}…` : name;
    return `Unknown tool: ${shown} (tools/list lists this server's tools).`;
  }
  return undefined;
}
