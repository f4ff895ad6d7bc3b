import { is } from "drizzle-orm";
import { PgTransaction } from "drizzle-orm/pg-core";
import type { Db } from "./client.ts";

/** What `afterCommit` registered in each open transaction that `transaction` opened. */
const registered = new WeakMap<Db, Array<() => void>>();

/**
 * Runs `fn` in a new transaction on `db` and, once that has committed, what `afterCommit`
 * registered in it, in order. Nothing registered runs when the transaction rolls back. Called on
 * an open transaction, `fn` runs in a savepoint whose hooks wait for the outer transaction's commit
 * (dropped with the savepoint, or when the outer transaction is not one `transaction` opened).
 */
export async function transaction<T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  const hooks: Array<() => void> = [];
  const result = await db.transaction(async (tx) => {
    registered.set(tx, hooks);
    try {
      return await fn(tx);
    } finally {
      // Registered after the transaction ended, a hook is dropped, not kept in a list nobody reads.
      registered.delete(tx);
    }
  });
  if (is(db, PgTransaction)) {
    registered.get(db)?.push(...hooks);
    return result;
  }
  for (const hook of hooks) {
    // The transaction has committed whatever a hook does: its failure is not the caller's.
    try {
      hook();
    } catch (error) {
      process.emitWarning(`a hook run after a commit threw: ${String(error)}`, "AfterCommitWarning");
    }
  }
  return result;
}

/**
 * Runs `hook` once what `db` has written is committed: at once on a database handle (a write
 * outside a transaction has committed), after the commit of a transaction `transaction` opened.
 * In any other transaction (a savepoint, or one drizzle opened directly) the hook is dropped: a
 * hook here is a hint that makes something happen sooner, such as a job queue's worker waking
 * before its next poll, never something that correctness may rely on.
 */
export function afterCommit(db: Db, hook: () => void): void {
  const hooks = registered.get(db);
  if (hooks) hooks.push(hook);
  else if (!is(db, PgTransaction)) hook();
}
