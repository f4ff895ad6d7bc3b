import { and, asc, type SQL, sql } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import { AppError } from "../../errors.ts";
import type { Db } from "./client.ts";

/** Keyset cursor over (createdAt, id): stable under inserts, O(page) per request. */
export type Cursor = { createdAt: Date; id: string };

export function encodeCursor(row: Cursor): string {
  return Buffer.from(JSON.stringify([row.createdAt.toISOString(), row.id])).toString("base64url");
}

export function decodeCursor(raw: string | undefined): Cursor | undefined {
  if (raw === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
    if (Array.isArray(parsed) && typeof parsed[0] === "string" && typeof parsed[1] === "string") {
      const createdAt = new Date(parsed[0]);
      if (!Number.isNaN(createdAt.getTime())) return { createdAt, id: parsed[1] };
    }
  } catch {
    // fall through to the error below
  }
  throw new AppError("invalid_request", "cursor is not a cursor this API issued.", { parameter: "cursor" });
}

/** Takes `pageSize + 1` rows and turns them into a page. */
export function toPage<T extends Cursor, U>(rows: T[], pageSize: number, map: (row: T) => U) {
  const items = rows.slice(0, pageSize);
  const last = items.at(-1);
  return {
    items: items.map(map),
    nextCursor: rows.length > pageSize && last ? encodeCursor(last) : null,
  };
}

/** `WHERE (created_at, id) > (cursor)`; timestamps are millisecond columns so the cursor is exact. */
export function afterCursor(createdAt: PgColumn, id: PgColumn, cursor: Cursor | undefined): SQL | undefined {
  if (!cursor) return undefined;
  // sql.param with the column as encoder: postgres-js under drizzle does not encode a bare Date.
  return sql`(${createdAt}, ${id}) > (${sql.param(cursor.createdAt, createdAt)}, ${cursor.id})`;
}

/**
 * `WHERE (created_at, id) < (cursor)`: the same cursor for a list read newest first (the audit
 * trail), where the next page holds what happened before the last item shown.
 */
export function beforeCursor(createdAt: PgColumn, id: PgColumn, cursor: Cursor | undefined): SQL | undefined {
  if (!cursor) return undefined;
  return sql`(${createdAt}, ${id}) < (${sql.param(cursor.createdAt, createdAt)}, ${sql.param(cursor.id, id)})`;
}

/** A table listed a page at a time in creation order (every such table has these two columns). */
type ListedTable = PgTable & { createdAt: PgColumn; id: PgColumn };

/**
 * One page of `table`'s rows matching `where`, oldest first, after `input.cursor`: the keyset
 * query every list verb makes. The verb authorises and scopes (`where`) before calling it.
 */
export async function readPage<T extends ListedTable, U>(
  db: Db,
  table: T,
  where: SQL | undefined,
  input: { pageSize: number; cursor?: string | undefined },
  map: (row: T["$inferSelect"]) => U,
  /** The columns to read when the page needs fewer than all (a large one it never shows). */
  columns?: Record<string, PgColumn>,
): Promise<{ items: U[]; nextCursor: string | null }> {
  const query = columns ? db.select(columns) : db.select();
  const rows = (await query
    .from(table as PgTable)
    .where(and(where, afterCursor(table.createdAt, table.id, decodeCursor(input.cursor))))
    .orderBy(asc(table.createdAt), asc(table.id))
    .limit(input.pageSize + 1)) as (T["$inferSelect"] & Cursor)[];
  return toPage(rows, input.pageSize, map);
}
