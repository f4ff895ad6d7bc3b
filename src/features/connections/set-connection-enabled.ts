import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { auditRows } from "../../platform/audit/record-audit.ts";
import { assertRevision, bumpRevision, type ConnectionRef, findConnection } from "./find-connection.ts";
import { assertEnvironmentRoom } from "./limits.ts";
import type { Connection } from "./schemas.ts";
import {
  approvalIsStale,
  hasApproval,
  hasCredential,
  needsCredential,
  toListedConnection,
  viewConnection,
} from "./view-connection.ts";

/**
 * Enables or disables a connection. Enabling needs a current approval, a credential when the
 * auth kind needs one, and room under the environment's limits. Setting the state it already
 * has changes nothing (and keeps the revision).
 */
export async function setConnectionEnabled(args: {
  ctx: ServiceContext;
  input: ConnectionRef & { revision: number; enabled: boolean };
}): Promise<Connection> {
  requireOwnerOrAdmin(args.ctx, "mcp_connections:manage");
  const { ctx, input } = args;
  return withTransaction(ctx, async (tx) => {
    const row = await findConnection(tx, ctx, input, { forUpdate: true, lockEnvironment: true });
    assertRevision(row, input.revision);
    if (row.enabled === input.enabled) return viewConnection(tx, row);
    if (input.enabled) {
      if (needsCredential(row) && !hasCredential(row)) {
        throw new AppError("credential_required", "Attach a credential before enabling this connection.");
      }
      if (!hasApproval(row) || approvalIsStale(row)) {
        throw new AppError(
          "approval_required",
          hasApproval(row)
            ? "The approval is stale (endpoint or authentication changed); discover and approve again before enabling."
            : "Approve tools before enabling: discover, select, approve.",
        );
      }
      await assertEnvironmentRoom(tx, {
        environmentId: row.environmentId,
        connectionId: row.id,
        approvedToolCount: row.approvedToolCount,
      });
    }
    const audit = auditRows(tx, ctx, [
      {
        action: input.enabled ? "mcp_connection.enabled" : "mcp_connection.disabled",
        targetType: "mcp_connection",
        targetId: row.id,
        environmentId: row.environmentId,
        details: { revision: row.revision + 1 },
      },
    ]);
    const next = await bumpRevision(tx, row, { enabled: input.enabled }, ctx.deps.clock(), audit);
    return toListedConnection(next);
  });
}
