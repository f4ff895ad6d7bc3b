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
