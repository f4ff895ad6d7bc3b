import { and, eq, sql } from "drizzle-orm";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import type { Db } from "../db/client.ts";
import { mcpConnections } from "../db/schema/mcp-connections.ts";
import { vaultSecrets } from "../db/schema/secrets.ts";
import { openSecret, type SecretBinding, sealSecret } from "./envelope.ts";
import type { Keyring } from "./keyring.ts";

/** Where a connection's credential lives: the scope every read and write is checked against. */
export type CredentialScope = { organizationId: string; environmentId: string; connectionId: string };

/**
 * Seals `plaintext` under the binding {org, env, connection, credentialVersion} and makes it
 * the connection's one credential row, replacing any previous one (new id, new data key).
 * The connection must exist in the given organisation and environment, so a row's scope
 * columns always agree with its connection's. Call inside the transaction that bumps the
 * connection's `credential_version`.
 */
export async function storeCredential(
  tx: Db,
  keyring: Keyring,
  input: CredentialScope & { credentialVersion: number; plaintext: string },
): Promise<{ id: string; kekVersion: number }> {
  const binding = bindingOf(input, input.credentialVersion);
  if (!UUID.test(input.environmentId)) throw notFound(input.connectionId);
  const [connection] = await tx
    .select({ id: mcpConnections.id })
    .from(mcpConnections)
    .where(
      and(
        eq(mcpConnections.id, input.connectionId),
        eq(mcpConnections.organizationId, input.organizationId),
        eq(mcpConnections.environmentId, input.environmentId),
      ),
    )
    .limit(1);
  if (!connection) throw notFound(input.connectionId);

  const sealed = sealSecret({ keyring, plaintext: input.plaintext, aad: binding });
  const row = { id: newId("sec"), ...binding, ...sealed };
  await tx
    .insert(vaultSecrets)
    .values(row)
    .onConflictDoUpdate({
      target: vaultSecrets.connectionId,
      // Every column is replaced, the id too: nothing of the old secret or its rotation state
      // survives, and a re-wrap racing this write (it matches on id and wrapped key) misses.
      set: { ...row, createdAt: sql`now()`, rewrappedAt: null },
    });
  return { id: row.id, kekVersion: row.kekVersion };
}

/**
 * The connection's credential in plaintext, or null when it has none in this scope. The
 * binding is the caller's ids plus the row's credential version, so a sealed row copied onto
 * another connection (or relabelled to another scope) fails with the vault's generic
 * `internal` error instead of opening.
 */
export async function readCredential(
  db: Db,
  keyring: Keyring,
  scope: CredentialScope & { expectedVersion?: number | undefined },
): Promise<string | null> {
  // environment_id is a uuid column: any other text cannot name a row (and must not reach SQL as a 500).
  if (!UUID.test(scope.environmentId)) return null;
  const [row] = await db
    .select()
    .from(vaultSecrets)
    .where(
      and(
        eq(vaultSecrets.connectionId, scope.connectionId),
        eq(vaultSecrets.organizationId, scope.organizationId),
        eq(vaultSecrets.environmentId, scope.environmentId),
      ),
    )
    .limit(1);
  if (!row) return null;
  // The connection row says which credential version is live; binding to it means an older sealed
  // row put back into the table (a rollback by someone with database access) does not open.
  return openSecret({
    keyring,
    sealed: row,
    aad: bindingOf(scope, scope.expectedVersion ?? row.credentialVersion),
  });
}

/** Deletes the connection's credential row; true when there was one. The key material goes with it. */
export async function destroyCredential(tx: Db, input: { connectionId: string }): Promise<boolean> {
  const deleted = await tx
    .delete(vaultSecrets)
    .where(eq(vaultSecrets.connectionId, input.connectionId))
    .returning({ id: vaultSecrets.id });
  return deleted.length > 0;
}

/** The binding a credential of `scope` is sealed under at `credentialVersion`. */
export const bindingOf = (scope: CredentialScope, credentialVersion: number): SecretBinding => ({
  organizationId: scope.organizationId,
  environmentId: scope.environmentId,
  connectionId: scope.connectionId,
  credentialVersion,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const notFound = (connectionId: string) =>
  new AppError("not_found", `Connection ${connectionId} was not found.`);
