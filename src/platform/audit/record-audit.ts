import type { ServiceContext } from "../../context.ts";
import type { Db } from "../db/client.ts";
import { auditLog } from "../db/schema/audit-log.ts";
import type { AuditAction } from "./actions.ts";

/** One audit entry of the calling actor (`recordAudit`, `auditRows`). */
export type AuditEntry = {
  action: AuditAction;
  targetType: string;
  targetId: string;
  environmentId?: string | null | undefined;
  details?: Record<string, unknown>;
};

/**
 * Appends an audit entry. Call it with the transaction that makes the change so both commit
 * or neither does. `details` must never carry secrets: pass ids, revisions and counts.
 * `environmentId` is the environment the target lives in (none for organisation-wide targets).
 */
export async function recordAudit(tx: Db, ctx: ServiceContext, entry: AuditEntry): Promise<void> {
  await auditRows(tx, ctx, [entry]);
}

/**
 * The INSERT of `recordAudit`'s rows for several entries, not yet run: await it, or hand it to a
 * change that carries it in its own statement (a `with`), so the audit costs the write no round
 * trip of its own. Same rules as `recordAudit`: the change's transaction, no secrets.
 */
export function auditRows(tx: Db, ctx: ServiceContext, entries: readonly AuditEntry[]) {
  const actor = ctx.actor;
  return tx.insert(auditLog).values(
    entries.map((entry) => ({
      organizationId: actor.organizationId,
      actorType: actor.type,
      actorId: actor.id,
      actorUserId: "userId" in actor ? actor.userId : null,
      channel: ctx.channel,
      environmentId: entry.environmentId ?? null,
      action: entry.action,
      targetType: entry.targetType,
      targetId: entry.targetId,
      requestId: ctx.requestId,
      idempotencyKey: ctx.idempotencyKey ?? null,
      details: entry.details ?? null,
    })),
  );
}

/** The INSERT `auditRows` builds. */
export type AuditRows = ReturnType<typeof auditRows>;

/**
 * A row whose actor is not (yet) an actor of the organisation: the person accepting an
 * invitation or claiming a wallet organisation, the GitHub callback, the bootstrap. Same columns,
 * named by the caller.
 */
export async function recordAuditAs(
  tx: Db,
  row: {
    organizationId: string;
    actor: { type: "user"; userId: string } | { type: "system"; id: string };
    channel: ServiceContext["channel"];
    action: AuditAction;
    targetType: string;
    targetId: string;
    environmentId?: string | null | undefined;
    requestId?: string | undefined;
    details?: Record<string, unknown>;
  },
): Promise<void> {
  await tx.insert(auditLog).values({
    organizationId: row.organizationId,
    actorType: row.actor.type,
    actorId: row.actor.type === "user" ? row.actor.userId : row.actor.id,
    actorUserId: row.actor.type === "user" ? row.actor.userId : null,
    channel: row.channel,
    environmentId: row.environmentId ?? null,
    action: row.action,
    targetType: row.targetType,
    targetId: row.targetId,
    requestId: row.requestId ?? null,
    details: row.details ?? null,
  });
}
