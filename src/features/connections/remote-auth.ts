import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import type { RemoteAuth } from "../../platform/mcp-client/remote-auth-header.ts";
import { readCredential } from "../../platform/vault/credential-store.ts";
import type { Keyring } from "../../platform/vault/keyring.ts";
import type { ConnectionRow } from "./find-connection.ts";

/** How to authenticate to the connection's server, with the vault credential when the kind needs one. */
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
