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
  const who: Who = {
    organizationId: actor.organizationId,
    actorType: actor.type,
    actorId: actor.id,
    actorUserId: "userId" in actor ? actor.userId : null,
    channel: ctx.channel,
    requestId: ctx.requestId,
    idempotencyKey: ctx.idempotencyKey ?? null,
  };
  return tx.insert(auditLog).values(entries.map((entry) => auditRow(who, entry)));
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
  row: AuditEntry & {
    organizationId: string;
    actor: { type: "user"; userId: string } | { type: "system"; id: string };
    channel: ServiceContext["channel"];
    requestId?: string | undefined;
  },
): Promise<void> {
  const { actor } = row;
  const who: Who = {
    organizationId: row.organizationId,
    actorType: actor.type,
    actorId: actor.type === "user" ? actor.userId : actor.id,
    actorUserId: actor.type === "user" ? actor.userId : null,
    channel: row.channel,
    requestId: row.requestId ?? null,
    idempotencyKey: null,
  };
  await tx.insert(auditLog).values(auditRow(who, row));
}

/** Who did it, through what: the columns an entry's row takes from its actor and request. */
type Who = Pick<
  typeof auditLog.$inferInsert,
  "organizationId" | "actorType" | "actorId" | "actorUserId" | "channel" | "requestId" | "idempotencyKey"
>;

function auditRow(who: Who, entry: AuditEntry): typeof auditLog.$inferInsert {
  return {
    ...who,
    environmentId: entry.environmentId ?? null,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    details: entry.details ?? null,
  };
}
