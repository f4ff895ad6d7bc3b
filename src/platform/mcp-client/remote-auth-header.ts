import { AppError } from "../../errors.ts";

/** How a connection authenticates to its remote MCP server: the credential as it leaves. */
export type RemoteAuth =
  | { kind: "none" }
  | { kind: "bearer"; credential: string }
  | { kind: "api_key"; headerName: string; credential: string };

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Visible ASCII, inner spaces allowed. Checked here because fetch's own refusal of a bad
// header value quotes the value in its message — that would put the credential in an error.
const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
// Headers the transport sets itself: a credential there would break or hijack the protocol.
// The full policy for configured names is connections/remote-auth.ts (checked on write).
const TRANSPORT_OWNED = new Set([
  "accept",
  "authorization",
  "connection",
  "content-length",
  "content-type",
  "host",
  "last-event-id",
  "transfer-encoding",
]);

export type CredentialHeader = { name: string; value: string };

/** The header that carries the credential, or undefined for `none`. */
export function authHeader(auth: RemoteAuth): CredentialHeader | undefined {
  if (auth.kind === "none") return undefined;
  if (!HEADER_VALUE.test(auth.credential)) {
    throw new AppError(
      "invalid_request",
      "The credential must be printable ASCII without leading or trailing spaces (it is sent as an HTTP header value).",
    );
  }
  if (auth.kind === "bearer") return { name: "authorization", value: `Bearer ${auth.credential}` };
  const name = auth.headerName.toLowerCase();
  if (!TOKEN.test(name) || TRANSPORT_OWNED.has(name) || name.startsWith("mcp-")) {
    throw new AppError("invalid_request", "auth.headerName cannot carry the credential.", {
      field: "auth.headerName",
    });
  }
  return { name, value: auth.credential };
}
