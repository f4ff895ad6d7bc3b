import { AppError } from "../../errors.ts";

const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Headers the API-key header may not be: hop-by-hop and framing headers (request smuggling),
 * cookies, host and routing, Authorization (that is what `bearer` is for), and the MCP
 * protocol's own `Mcp-*` headers, which the transport owns.
 */
const reserved = new Set([
  "accept",
  "accept-encoding",
  "authorization",
  "connection",
  "content-encoding",
  "content-length",
  "content-type",
  "cookie",
  "expect",
  "forwarded",
  "host",
  "keep-alive",
  "last-event-id",
  "origin",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "set-cookie",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "via",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-real-ip",
]);

export function assertHeaderName(name: string): void {
  const lower = name.toLowerCase();
  if (!token.test(name)) {
    throw new AppError(
      "invalid_request",
      "auth.headerName must be an HTTP header name (an RFC 9110 token).",
      {
        field: "auth.headerName",
      },
    );
  }
  if (
    reserved.has(lower) ||
    lower.startsWith("mcp-") ||
    lower.startsWith("sec-") ||
    lower.startsWith("proxy-")
  ) {
    throw new AppError(
      "invalid_request",
      `auth.headerName "${name}" is reserved; choose a header such as X-Api-Key.`,
      {
        field: "auth.headerName",
      },
    );
  }
}
