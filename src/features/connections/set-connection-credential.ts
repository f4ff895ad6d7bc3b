import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { auditRows } from "../../platform/audit/record-audit.ts";
import { listRemoteTools } from "../../platform/mcp-client/remote-client.ts";
import { storeCredential } from "../../platform/vault/credential-store.ts";
import { assertRevision, bumpRevision, type ConnectionRef, findConnection } from "./find-connection.ts";
import { candidateAuth } from "./remote-auth.ts";
import type { Connection } from "./schemas.ts";
import { toListedConnection } from "./view-connection.ts";

/**
 * Sets or rotates the credential. The candidate is tried against the server through egress
 * (initialize + tools/list) before it replaces the live one; if the server refuses it or cannot
 * be reached, the current credential stays (spec part 3). The value is sealed in the vault and
 * never returned, logged or audited.
 */
export async function setConnectionCredential(args: {
  ctx: ServiceContext;
  input: ConnectionRef & { revision: number; value: string };
}): Promise<Connection> {
  requireOwnerOrAdmin(args.ctx, "mcp_connections:manage");
  const { ctx, input } = args;
  const row = await findConnection(ctx.deps.db, ctx, input);
  assertRevision(row, input.revision);
  if (row.authKind === "none") {
    throw new AppError(
      "credential_not_applicable",
      "This connection uses no authentication; change auth.kind first.",
    );
  }
  await listRemoteTools({
    egress: ctx.deps.egress,
    endpointUrl: row.endpointUrl,
    auth: candidateAuth(row, input.value),
  });

  return withTransaction(ctx, async (tx) => {
    const current = await findConnection(tx, ctx, input, { forUpdate: true });
    assertRevision(current, input.revision);
    const credentialVersion = current.credentialVersion + 1;
    await storeCredential(tx, ctx.deps.keyring, {
      organizationId: current.organizationId,
      environmentId: current.environmentId,
      connectionId: current.id,
      credentialVersion,
      plaintext: input.value,
    });
    const now = ctx.deps.clock();
    // A new credential is a fresh start for the rejection condition (it may be accepted now).
    const audit = auditRows(tx, ctx, [
      {
        action: current.credentialUpdatedAt
          ? "mcp_connection.credential_rotated"
          : "mcp_connection.credential_set",
        targetType: "mcp_connection",
        targetId: current.id,
        environmentId: current.environmentId,
        details: { revision: current.revision + 1, credentialVersion },
      },
    ]);
    const next = await bumpRevision(
      tx,
      current,
      { credentialVersion, credentialUpdatedAt: now, credentialRejectedAt: null },
      now,
      audit,
    );
    return toListedConnection(next);
  });
}
