import { is } from "drizzle-orm";
import { PgTransaction } from "drizzle-orm/pg-core";
import type { Db } from "./client.ts";

/** What `afterCommit` registered in each open transaction that `transaction` opened. */
const registered = new WeakMap<Db, Array<() => void>>();

/**
 * Runs `fn` in a new transaction on `db` and, once that has committed, what `afterCommit`
 * registered in it, in order. Nothing registered runs when the transaction rolls back.
 */
export async function transaction<T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  const hooks: Array<() => void> = [];
  const result = await db.transaction((tx) => {
    registered.set(tx, hooks);
    return fn(tx);
  });
  for (const hook of hooks) hook();
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
