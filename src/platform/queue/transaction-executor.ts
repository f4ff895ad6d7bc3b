import { type SQLChunk, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { rowsOf } from "../db/result-rows.ts";
import type { SqlExecutor } from "./sql-executor.ts";

/**
 * pg-boss's SQL through the caller's drizzle transaction, so `send({ tx })` writes the job row in
 * that transaction: the job exists iff the change it describes was committed (DESIGN §3 rule 3).
 * Works for both drivers, because it only uses `tx.execute`.
 *
 * Only for pg-boss's job insert (a single DML statement): `$n` is rewritten without regard for
 * string literals, which that statement does not contain.
 */
export function transactionExecutor(tx: Db): SqlExecutor {
  return {
    async executeSql(text, values = []) {
      const result: unknown = await tx.execute(bindPositional(text, values));
      return { rows: rowsOf(result) };
    },
  };
}

/**
 * drizzle numbers parameters in order of appearance, so each `$n` becomes its own parameter
 * (a placeholder used twice is bound twice, with the same value).
 */
function bindPositional(text: string, values: readonly unknown[]) {
  const chunks: SQLChunk[] = [];
  let from = 0;
  for (const match of text.matchAll(/\$(\d+)/g)) {
    chunks.push(sql.raw(text.slice(from, match.index)));
    chunks.push(sql.param(toDriverValue(values[Number(match[1]) - 1])));
    from = match.index + match[0].length;
  }
  chunks.push(sql.raw(text.slice(from)));
  return sql.join(chunks);
}

/**
 * drizzle sets up postgres.js to pass json and timestamp parameters through unserialised (its
 * column types serialise them first), so objects go as JSON text and dates as ISO strings;
 * PGlite accepts the same text for those types.
 */
function toDriverValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object" && value !== null && !Array.isArray(value)) return JSON.stringify(value);
  return value;
}
