import { createHash } from "node:crypto";
import { and, eq, gt, inArray, isNull, sql } from "drizzle-orm";
import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { randomToken } from "../../ids.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import type { Db } from "../../platform/db/client.ts";
import { deletionReceipts } from "../../platform/db/schema/deletion-receipts.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";
import { assertRevision, type ConnectionRef, findConnection } from "./find-connection.ts";
import type { DeletionPreview } from "./schemas.ts";

/** Receipts live five minutes (DESIGN §5) and are single use. */
const RECEIPT_TTL_MS = 5 * 60 * 1000;

const hashReceipt = (receipt: string): string => createHash("sha256").update(receipt).digest("hex");

/**
 * Shows what deletion would destroy and issues a short-lived, single-use receipt bound to the
 * connection and its current revision. Does not change the connection.
 */
export async function previewConnectionDeletion(args: {
  ctx: ServiceContext;
  input: ConnectionRef & { revision: number };
}): Promise<DeletionPreview> {
  requireOwnerOrAdmin(args.ctx, "mcp_connections:manage");
  const { ctx, input } = args;
  return withTransaction(ctx, async (tx) => {
    const row = await findConnection(tx, ctx, input);
    assertRevision(row, input.revision);
    const receipt = `dlr_${randomToken(20)}`;
    const expiresAt = new Date(ctx.deps.clock().getTime() + RECEIPT_TTL_MS);
    await tx.insert(deletionReceipts).values({
      receiptHash: hashReceipt(receipt),
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
      environmentId: row.environmentId,
      details: { revision: row.revision, effects },
    });
    return { receipt, expiresAt: expiresAt.toISOString(), effects };
  });
}

/**
 * Tasks not yet finished whose frozen snapshot includes the connection: deleting it makes their
 * next call to it fail closed (`connection_changed`).
 */
async function countRunningTasks(db: Db, connectionId: string): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(tasks)
    .where(
      and(
        inArray(tasks.status, ["queued", "running"]),
        sql`${tasks.snapshot} -> 'connections' @> ${JSON.stringify([{ connectionId }])}::jsonb`,
      ),
    );
  return row?.count ?? 0;
}

/**
 * Deletes a disabled connection, confirmed by a receipt from a preview of this very revision.
 * The credential, discoveries and approval go with it (cascade).
 */
export async function deleteConnection(args: {
  ctx: ServiceContext;
  input: ConnectionRef & { revision: number; receipt: string | undefined };
}): Promise<void> {
  requireOwnerOrAdmin(args.ctx, "mcp_connections:manage");
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
      environmentId: row.environmentId,
      details: { revision: row.revision, alias: row.alias, approvedToolCount: row.approvedToolCount },
    });
  });
}
