import { MAX_API_BODY_BYTES } from "../http/api-guards.ts";

/**
 * A POST to /mcp with its body read once. `json` holds the parsed body, for the transport's
 * `parsedBody`; without it, `request` still carries a body for the transport to read and refuse
 * (too large, not JSON) with its own answers.
 */
export type McpPost = { request: Request; json?: { value: unknown } };

/**
 * Reads the body the cheap way when its size is known. The SDK's transport reads `request.body`
 * as a stream, which makes the Node adapter build a whole web `Request` (6–7 % of a read tool's
 * `tools/call` CPU, profiled); `text()` reads the socket directly. Only a `Content-Length` within
 * the limit is read here — Node's parser delivers no more than that many bytes — so an oversized
 * or chunked body is still cut off by the transport's streaming limit, never buffered whole.
 */
export async function readMcpPost(request: Request): Promise<McpPost> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (!Number.isSafeInteger(declared) || declared < 0 || declared > MAX_API_BODY_BYTES) return { request };
  // A body cut short (the client went away) is read as empty: the transport answers it as the
  // unparsable body it is, as when it reads one itself, rather than as a server fault.
  const text = await request.text().catch(() => "");
  // In process (`app.request`) the header is only a claim: the transport judges a body that
  // exceeds it, as it does one that is not JSON.
  const again = () => ({
    request: new Request(request.url, { method: "POST", headers: request.headers, body: text }),
  });
  if (Buffer.byteLength(text) > MAX_API_BODY_BYTES) return again();
  try {
    return { request, json: { value: JSON.parse(text) } };
  } catch {
    return again();
  }
}
