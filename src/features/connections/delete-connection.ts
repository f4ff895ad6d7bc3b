import { and, eq, gt, isNull } from "drizzle-orm";
import { type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { deletionReceipts } from "../../platform/db/schema/deletion-receipts.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import { authorizeConnections } from "./authorize.ts";
import { hashReceipt } from "./deletion-receipt.ts";
import { assertRevision, type ConnectionRef, findConnection } from "./find-connection.ts";

/**
 * Deletes a disabled connection, confirmed by a receipt from a preview of this very revision.
 * The credential, discoveries and approval go with it (cascade).
 */
export async function deleteConnection(args: {
  ctx: ServiceContext;
  input: ConnectionRef & { revision: number; receipt: string | undefined };
}): Promise<void> {
  authorizeConnections(args.ctx, "manage");
  const { ctx, input } = args;
  await withTransaction(ctx, async (tx) => {
    const row = await findConnection(tx, ctx, input, { forUpdate: true });
    assertRevision(row, input.revision);
    if (!input.receipt) {
      throw new AppError(
        "receipt_required",
        "Preview the deletion first and send its receipt in the Deletion-Receipt header.",
      );
    }
    const receiptHash = hashReceipt(input.receipt);
    if (row.enabled) throw new AppError("connection_enabled", "Disable the connection before deleting it.");
    const now = ctx.deps.clock();
    const used = await tx
      .update(deletionReceipts)
      .set({ usedAt: now })
      .where(
        and(
          eq(deletionReceipts.receiptHash, receiptHash),
          eq(deletionReceipts.connectionId, row.id),
          eq(deletionReceipts.connectionRevision, row.revision),
          isNull(deletionReceipts.usedAt),
          gt(deletionReceipts.expiresAt, now),
        ),
      )
      .returning({ hash: deletionReceipts.receiptHash });
    if (used.length === 0) {
      throw new AppError(
        "receipt_invalid",
        "The deletion receipt is unknown, expired, already used, or for another connection or revision; preview again.",
      );
    }
    await tx.delete(mcpConnections).where(eq(mcpConnections.id, row.id));
    await recordAudit(tx, ctx, {
      action: "mcp_connection.deleted",
      targetType: "mcp_connection",
      targetId: row.id,
      details: { revision: row.revision, alias: row.alias, approvedToolCount: row.approvedToolCount },
    });
  });
}
