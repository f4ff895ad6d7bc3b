import { type ServiceContext, withTransaction } from "../../context.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { deletionReceipts } from "../../platform/db/schema/deletion-receipts.ts";
import { authorizeConnections } from "./authorize.ts";
import { newReceipt, RECEIPT_TTL_MS } from "./deletion-receipt.ts";
import { assertRevision, type ConnectionRef, findConnection } from "./find-connection.ts";
import { countRunningTasks } from "./running-tasks.ts";

export type DeletionPreview = {
  receipt: string;
  expiresAt: string;
  effects: { approvedToolCount: number; credentialDestroyed: boolean; runningTasksAffected: number };
};

/**
 * Shows what deletion would destroy and issues a short-lived, single-use receipt bound to the
 * connection and its current revision. Does not change the connection.
 */
export async function previewConnectionDeletion(args: {
  ctx: ServiceContext;
  input: ConnectionRef & { revision: number };
}): Promise<DeletionPreview> {
  authorizeConnections(args.ctx, "manage");
  const { ctx, input } = args;
  return withTransaction(ctx, async (tx) => {
    const row = await findConnection(tx, ctx, input);
    assertRevision(row, input.revision);
    const { receipt, hash } = newReceipt();
    const expiresAt = new Date(ctx.deps.clock().getTime() + RECEIPT_TTL_MS);
    await tx.insert(deletionReceipts).values({
      receiptHash: hash,
      organizationId: row.organizationId,
      connectionId: row.id,
      connectionRevision: row.revision,
      expiresAt,
    });
    const effects = {
      approvedToolCount: row.approvedToolCount,
      credentialDestroyed: row.credentialUpdatedAt !== null,
      runningTasksAffected: await countRunningTasks(tx, row.id),
    };
    await recordAudit(tx, ctx, {
      action: "mcp_connection.deletion_previewed",
      targetType: "mcp_connection",
      targetId: row.id,
      details: { revision: row.revision, effects },
    });
    return { receipt, expiresAt: expiresAt.toISOString(), effects };
  });
}
