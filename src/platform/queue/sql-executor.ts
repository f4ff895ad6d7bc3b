import type { PGlite } from "@electric-sql/pglite";
import { type SQLChunk, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { rowsOf } from "../db/result-rows.ts";

/**
 * What pg-boss runs its SQL through: its `db` option (`PgBoss.Db`), typed without `any`.
 * pg-boss calls it with `values` for single statements and without for its multi-statement
 * schema and maintenance scripts.
 */
export type SqlExecutor = {
  executeSql(text: string, values?: readonly unknown[]): Promise<{ rows: unknown[] }>;
};

/** An executor that can be shut: see `gated`. */
export type GatedExecutor = {
  executeSql(text: string, values?: readonly unknown[]): Promise<{ rows: unknown[] } | undefined>;
  open(): void;
  close(): void;
};

/**
 * After `stop()` a handler that outlived the shutdown may still resolve, and pg-boss then
 * completes its job without awaiting the promise. A closed gate answers `undefined` — what
 * pg-boss's own `pg` pool answers once closed, and what its completion code tolerates — so a
 * stopped instance never writes again (the job may already be resumed elsewhere) and never
 * raises an unhandled rejection.
 */
export function gated(inner: SqlExecutor): GatedExecutor {
  let isOpen = false;
  return {
    executeSql: async (text, values) => (isOpen ? await inner.executeSql(text, values) : undefined),
    open: () => {
      isOpen = true;
    },
    close: () => {
      isOpen = false;
    },
  };
}

/**
 * pg-boss's SQL over the embedded PGlite (one in-process session, no `pg` pool).
 *
 * - Parameterised statements go through `query`, which binds and serialises values by the types
 *   Postgres infers, as `pg` does.
 * - Parameterless text goes through `exec` (simple protocol), because pg-boss sends its schema,
 *   migration and maintenance work as one multi-statement string. Its "locked" scripts carry their
 *   own BEGIN … COMMIT; they run inside `pglite.transaction` so that a script failing half-way is
 *   rolled back while PGlite's lock is still held — a bare `exec` would leave the one shared
 *   session in an aborted transaction for whoever queries next. The script's own BEGIN and COMMIT
 *   nest harmlessly (Postgres only warns).
 * - `query`, `exec` and `transaction` all take PGlite's transaction lock: pg-boss never runs inside
 *   an application transaction, it waits for it. So nothing here may be awaited from inside one
 *   (`send({ tx })` writes through the transaction instead).
 */
export function pgliteExecutor(pglite: PGlite): SqlExecutor {
  return {
    async executeSql(text, values) {
      if (values && values.length > 0) return await pglite.query(text, [...values]);
      const results = /^\s*BEGIN\b/i.test(text)
        ? await pglite.transaction((tx) => tx.exec(text))
        : await pglite.exec(text);
      return { rows: results.at(-1)?.rows ?? [] };
    },
  };
}

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
