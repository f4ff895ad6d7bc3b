import type { ServiceContext } from "../../context.ts";
import type { Db } from "../db/client.ts";
import { auditLog } from "../db/schema/audit-log.ts";

/**
 * Appends an audit entry. Call it with the transaction that makes the change so both commit
 * or neither does. `details` must never carry secrets: pass ids, revisions and counts.
 */
export async function recordAudit(
  tx: Db,
  ctx: ServiceContext,
  entry: { action: string; targetType: string; targetId: string; details?: Record<string, unknown> },
): Promise<void> {
  await tx.insert(auditLog).values({
    organizationId: ctx.actor.organizationId,
    actorType: ctx.actor.type,
    actorId: ctx.actor.id,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    requestId: ctx.requestId,
    idempotencyKey: ctx.idempotencyKey ?? null,
    details: entry.details ?? null,
  });
}
