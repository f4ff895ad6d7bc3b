import { and, desc, eq, gte, lt, or, type SQL, sql } from "drizzle-orm";
import { requireOwnerOrAdmin, type ServiceContext } from "../../context.ts";
import { AppError, isAppError } from "../../errors.ts";
import type { AuditAction, AuditChannel } from "../../platform/audit/actions.ts";
import { beforeCursor, decodeCursor, toPage } from "../../platform/db/pagination.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";
import { users } from "../../platform/db/schema/users.ts";
import { findEnvironment } from "../environments/index.ts";
import { safeDetails } from "./safe-details.ts";
import type { AuditEvent, AuditEventPage, AuditEventQueryInput } from "./schemas.ts";

/**
 * The organisation's audit trail, newest first: who changed what, when, through which door.
 * Owners and admins only (the trail names every member's keys and actions, like the key list).
 * The organisation in the path must be the caller's: another one's is 404, so ids of other
 * organisations — as path or as filters — only ever find nothing.
 */
export async function listAuditEvents(args: {
  ctx: ServiceContext;
  input: AuditEventQueryInput & { organizationId: string };
}): Promise<AuditEventPage> {
  const { ctx, input } = args;
  requireOwnerOrAdmin(ctx, "audit_log:read");
  const organizationId = ctx.actor.organizationId;
  if (input.organizationId !== organizationId) {
    throw new AppError("not_found", `Organisation ${input.organizationId} was not found.`);
  }
  const from = input.from === undefined ? undefined : new Date(input.from);
  const to = input.to === undefined ? undefined : new Date(input.to);
  if (from && to && from.getTime() >= to.getTime()) {
    throw new AppError("invalid_request", "from must be before to.", { parameter: "from" });
  }
  if (input.environmentId !== undefined) await knownEnvironment(ctx, input.environmentId);
  const cursor = decodeCursor(input.cursor);
  if (cursor && !/^\d{1,19}$/.test(cursor.id)) {
    throw new AppError("invalid_request", "cursor is not a cursor this API issued.", { parameter: "cursor" });
  }
  const where: (SQL | undefined)[] = [
    eq(auditLog.organizationId, organizationId),
    input.environmentId === undefined ? undefined : eq(auditLog.environmentId, input.environmentId),
    input.action === undefined ? undefined : eq(auditLog.action, input.action),
    input.channel === undefined ? undefined : eq(auditLog.channel, input.channel),
    input.target === undefined ? undefined : eq(auditLog.targetId, input.target),
    input.actor === undefined ? undefined : actorIs(input.actor),
    from ? gte(auditLog.createdAt, from) : undefined,
    to ? lt(auditLog.createdAt, to) : undefined,
    beforeCursor(auditLog.createdAt, auditLog.id, cursor),
  ];
  const rows = await ctx.deps.db
    .select({ row: auditLog, email: users.email })
    .from(auditLog)
    .leftJoin(users, eq(users.id, auditLog.actorUserId))
    .where(and(...where))
    .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
    .limit(input.pageSize + 1);
  const listed = rows.map(({ row, email }) => ({ ...row, email, id: String(row.id) }));
  return toPage(listed, input.pageSize, toAuditEvent);
}

/** A filter naming an environment that is not the caller's is refused, as any bad filter value. */
async function knownEnvironment(ctx: ServiceContext, environmentId: string): Promise<void> {
  try {
    await findEnvironment(ctx.deps.db, ctx, environmentId);
  } catch (error) {
    if (!isAppError(error) || error.code !== "not_found") throw error;
    throw new AppError("invalid_request", `environmentId ${environmentId} is not an environment of yours.`, {
      parameter: "environmentId",
    });
  }
}

/**
 * A person (email or user id: every credential they used) or one credential's id. The email is
 * matched through the users table, but only rows of the caller's organisation are ever read.
 */
function actorIs(actor: string): SQL | undefined {
  if (!actor.includes("@")) return or(eq(auditLog.actorId, actor), eq(auditLog.actorUserId, actor));
  // A scalar subquery: an unknown email is NULL and matches nothing, so no answer tells whether an
  // account exists (in another organisation, say).
  const userId = sql`(select ${users.id} from ${users} where lower(${users.email}) = lower(${actor}) limit 1)`;
  return eq(auditLog.actorUserId, userId);
}

type Listed = Omit<typeof auditLog.$inferSelect, "id"> & { id: string; email: string | null };

function toAuditEvent(row: Listed): AuditEvent {
  return {
    id: row.id,
    occurredAt: row.createdAt.toISOString(),
    action: row.action as AuditAction,
    channel: row.channel as AuditChannel,
    actor: {
      type: row.actorType as AuditEvent["actor"]["type"],
      id: row.actorId,
      userId: row.actorUserId,
      email: row.email,
    },
    target: { type: row.targetType, id: row.targetId },
    environmentId: row.environmentId,
    requestId: row.requestId,
    details: safeDetails(row.details ?? null),
  };
}
