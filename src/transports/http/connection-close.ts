import type { ErrorCode } from "../../errors.ts";

/**
 * Whether a refusal ends the connection: when it is answered before the request body was read —
 * a body past the size limit, or a request with a body shed under overload. Keeping the
 * connection would mean reading that body to its end first: Node discards it to reach the next
 * request, and @hono/node-server gives up after 500 ms or 64 MiB and destroys the socket it had
 * announced as kept alive. So the answer carries `Connection: close`, and Node ends the connection
 * once the answer is flushed. A shed request without a body leaves nothing unread: its connection
 * stays open, sparing the client a reconnection when the instance is busiest.
 */
export function closesConnection(code: ErrorCode, request: { headers: Headers }): boolean {
  if (code === "payload_too_large") return true;
  if (code !== "overloaded") return false;
  const length = request.headers.get("content-length");
  return request.headers.has("transfer-encoding") || (length !== null && length.trim() !== "0");
}
