import type { PGlite } from "@electric-sql/pglite";
import type { SqlExecutor } from "./sql-executor.ts";

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
