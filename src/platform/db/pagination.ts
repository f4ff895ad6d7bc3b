import { and, asc, eq, getTableName, type SQL, sql } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { SelectResultFields } from "drizzle-orm/query-builders/select.types";
import { AppError } from "../../errors.ts";
import { type Db, perDatabaseShape } from "./client.ts";

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

/**
 * `WHERE (created_at, id) < (cursor)`: the keyset cursor for a list read newest first (the audit
 * trail), where the next page holds what happened before the last item shown.
 */
export function beforeCursor(createdAt: PgColumn, id: PgColumn, cursor: Cursor | undefined): SQL | undefined {
  if (!cursor) return undefined;
  return sql`(${createdAt}, ${id}) < (${sql.param(cursor.createdAt, createdAt)}, ${sql.param(cursor.id, id)})`;
}

/** A table listed a page at a time in creation order (every such table has these two columns). */
type ListedTable = PgTable & { createdAt: PgColumn; id: PgColumn };

/** Equality filters on a table's columns, by the columns' property names: a list's scope. */
export type PageScope<T extends ListedTable> = Partial<Record<keyof T["$inferSelect"] & string, string>>;

/**
 * What a page reads when it needs less than whole rows: columns of the table, and SQL expressions
 * over a row (a part of a large jsonb column, a correlated lookup). Must include `createdAt` and
 * `id` (the cursor).
 */
export type PageColumns = Record<string, PgColumn | SQL | SQL.Aliased> & {
  createdAt: PgColumn;
  id: PgColumn;
};

/**
 * One page of `table`'s rows whose columns equal `scope`, oldest first, after `input.cursor`: the
 * keyset query every list verb makes. The verb authorises and scopes before calling it. With
 * `columns`, each row holds just those (typed by them); without, whole rows.
 *
 * The query is built once per database handle and shape (table, scope columns, columns read,
 * with or without a cursor) as a prepared statement with placeholders: building drizzle's SQL was
 * about a quarter of a list request's CPU (docs/performance.md, "REST API").
 */
export async function readPage<T extends ListedTable, U>(
  db: Db,
  table: T,
  scope: PageScope<T>,
  input: { pageSize: number; cursor?: string | undefined },
  map: (row: T["$inferSelect"]) => U,
): Promise<{ items: U[]; nextCursor: string | null }>;
export async function readPage<T extends ListedTable, C extends PageColumns, U>(
  db: Db,
  table: T,
  scope: PageScope<T>,
  input: { pageSize: number; cursor?: string | undefined },
  map: (row: SelectResultFields<C>) => U,
  /** The columns to read, when the page needs fewer than all (a large one it never shows). */
  columns: C,
): Promise<{ items: U[]; nextCursor: string | null }>;
export async function readPage<T extends ListedTable, U>(
  db: Db,
  table: T,
  scope: PageScope<T>,
  input: { pageSize: number; cursor?: string | undefined },
  map: (row: never) => U,
  columns?: PageColumns,
): Promise<{ items: U[]; nextCursor: string | null }> {
  const cursor = decodeCursor(input.cursor);
  const keys = Object.keys(scope).sort();
  const shape = `${getTableName(table)}:${keys.join(",")}:${columns ? Object.keys(columns).join(",") : "*"}:${cursor ? "after" : "first"}`;
  const statement = pageStatement(db, shape, (index) =>
    buildPageQuery(db, table, keys, columns, cursor !== undefined, `page_${index}_${getTableName(table)}`),
  );
  const params: Record<string, unknown> = { limit: input.pageSize + 1 };
  for (const key of keys) params[`scope_${key}`] = scope[key as keyof PageScope<T>];
  if (cursor) {
    params.afterCreatedAt = cursor.createdAt.toISOString();
    params.afterId = cursor.id;
  }
  const rows = (await statement.execute(params)) as Cursor[];
  return toPage(rows, input.pageSize, map as (row: Cursor) => U);
}

type PageStatement = { execute(params: Record<string, unknown>): Promise<unknown[]> };

/** Per database handle, by query shape. */
const pageStatement = perDatabaseShape<PageStatement>();

function buildPageQuery(
  db: Db,
  table: ListedTable,
  keys: string[],
  columns: PageColumns | undefined,
  withCursor: boolean,
  name: string,
): PageStatement {
  const conditions: SQL[] = keys.map((key) =>
    eq((table as unknown as Record<string, PgColumn>)[key] as PgColumn, sql.placeholder(`scope_${key}`)),
  );
  if (withCursor) {
    conditions.push(
      sql`(${table.createdAt}, ${table.id}) > (${sql.placeholder("afterCreatedAt")}::timestamptz, ${sql.placeholder("afterId")})`,
    );
  }
  const query = columns ? db.select(columns) : db.select();
  return query
    .from(table as PgTable)
    .where(and(...conditions))
    .orderBy(asc(table.createdAt), asc(table.id))
    .limit(sql.placeholder("limit"))
    .prepare(name) as unknown as PageStatement;
}
