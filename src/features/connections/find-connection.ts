import { and, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import type { AuditRows } from "../../platform/audit/record-audit.ts";
import type { Db } from "../../platform/db/client.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import { findInEnvironment } from "../environments/index.ts";
import { type ListedRow, listedConnectionColumns } from "./view-connection.ts";

export type ConnectionRow = typeof mcpConnections.$inferSelect;
export type ConnectionRef = { environmentId: string; connectionId: string };

/**
 * The tenancy gate for a connection (`findInEnvironment`): another organisation's or another
 * environment's connection is 404. `lockEnvironment` is for verbs that check environment-wide limits.
 */
export const findConnection = (
  db: Db,
  ctx: ServiceContext,
  ref: ConnectionRef,
  opts: { forUpdate?: boolean; lockEnvironment?: boolean } = {},
): Promise<ConnectionRow> =>
  findInEnvironment(
    db,
    ctx,
    mcpConnections,
    { environmentId: ref.environmentId, id: ref.connectionId, what: "MCP connection" },
    opts,
  );

/** 412 with the current revision when the caller's If-Match is out of date. */
export function assertRevision(row: ConnectionRow, revision: number): void {
  if (row.revision !== revision) {
    throw new AppError(
      "revision_conflict",
      "The connection changed since you read it; read it again and repeat the change with the current revision.",
      { currentRevision: row.revision },
    );
  }
}

type Patch = Partial<
  Omit<ConnectionRow, "id" | "organizationId" | "environmentId" | "alias" | "revision" | "createdAt">
>;

/**
 * Applies a change and increments the revision (to `row.revision + 1`); the row must be locked by
 * the caller. Returns the changed row as the view reads it (`toListedConnection`): the update's
 * RETURNING reads the latest discovery and the approver's email too, so a write needs no further
 * query for its answer. `audit` (`auditRows`) goes in the same statement, as a `with`: PostgreSQL
 * runs it whether or not the update matches, and when it does not this throws, which rolls the
 * transaction and the audit rows back.
 */
export async function bumpRevision(
  tx: Db,
  row: ConnectionRow,
  patch: Patch,
  now: Date,
  audit?: AuditRows,
): Promise<ListedRow> {
  const writer = audit ? tx.with(tx.$with("audit_rows", {}).as(audit.getSQL())) : tx;
  const [next] = await writer
    .update(mcpConnections)
    .set({ ...patch, revision: sql`${mcpConnections.revision} + 1`, updatedAt: now })
    .where(and(eq(mcpConnections.id, row.id), eq(mcpConnections.revision, row.revision)))
    .returning(listedConnectionColumns);
  if (!next) throw new Error("locked connection row changed under its lock");
  return next;
}
