import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import type { RemoteAuth } from "../../platform/mcp-client/remote-auth-header.ts";
import { readCredential } from "../../platform/vault/credential-store.ts";
import type { Keyring } from "../../platform/vault/keyring.ts";
import type { ConnectionRow } from "./find-connection.ts";

/** The fields a credential lookup needs (the task gate reads no more than these). */
type AuthFields = Pick<
  ConnectionRow,
  | "id"
  | "organizationId"
  | "environmentId"
  | "authKind"
  | "authHeaderName"
  | "credentialUpdatedAt"
  | "credentialVersion"
>;

/** How to authenticate to the connection's server, with the vault credential when the kind needs one. */
export async function remoteAuthFor(db: Db, keyring: Keyring, row: AuthFields): Promise<RemoteAuth> {
  if (row.authKind === "none") return { kind: "none" };
  const credential =
    row.credentialUpdatedAt === null
      ? null
      : await readCredential(db, keyring, {
          organizationId: row.organizationId,
          environmentId: row.environmentId,
          connectionId: row.id,
          expectedVersion: row.credentialVersion,
        });
  if (credential === null) {
    throw new AppError(
      "credential_required",
      "This connection's authentication needs a credential; attach one first.",
    );
  }
  return candidateAuth(row, credential);
}

/** The auth to try with a given credential (used to validate a candidate before storing it). */
export function candidateAuth(
  row: Pick<ConnectionRow, "authKind" | "authHeaderName">,
  credential: string,
): RemoteAuth {
  if (row.authKind === "api_key")
    return { kind: "api_key", headerName: row.authHeaderName ?? "", credential };
  if (row.authKind === "bearer") return { kind: "bearer", credential };
  return { kind: "none" };
}

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

/** The API-key header a connection sends its credential in: an HTTP token, and not a reserved one. */
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
