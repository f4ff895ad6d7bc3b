/**
 * Point reads issued in one event-loop turn, sent as ONE query. Each request's lookup (the
 * environment of `GET /api/v1/environments/{id}`, say) is a prepared single-row read; under
 * load, the requests handled in one turn each paid postgres.js's per-query work (building the
 * Bind, parsing the result, the drizzle session around it) and PostgreSQL's (one portal, one
 * executor start-up per row). Batched, those costs are paid once per turn
 * (docs/performance.md, "REST API").
 *
 * Semantics are those of separate reads:
 * - a caller's key is only answered by the rows the batch query returns for exactly that key
 *   (callers pass the whole key, tenancy included, and the query matches on all of it);
 * - the batch is sent after the turn in which its callers asked, so a write committed before a
 *   caller asked is visible to it;
 * - when the batch query fails, each key is read again on its own, so one caller's bad input
 *   (or any per-key failure) reaches that caller only.
 */
export type BatchReader<K, V> = {
  /** The value stored under `key`, or undefined when there is none. */
  load(key: K): Promise<V | undefined>;
};

/** At most this many keys in one query; a larger turn is split. */
const MAX_BATCH = 256;

export function batchReader<K, V>(options: {
  /** A string that identifies the key completely (tenancy included): equal ids, equal answers. */
  id(key: K): string;
  /** Reads all `keys` at once: the values found, each with the id of the key it answers. */
  readMany(keys: readonly K[]): Promise<ReadonlyArray<readonly [string, V]>>;
  /** Reads one key on its own: used for a batch of one and when a batch query fails. */
  readOne(key: K): Promise<V | undefined>;
}): BatchReader<K, V> {
  type Waiter = { resolve(value: V | undefined): void; reject(error: unknown): void };
  let pending = new Map<string, { key: K; waiters: Waiter[] }>();
  let scheduled = false;

  const settleOne = (key: K, waiters: Waiter[]) =>
    options.readOne(key).then(
      (value) => {
        for (const w of waiters) w.resolve(value);
      },
      (error: unknown) => {
        for (const w of waiters) w.reject(error);
      },
    );

  const run = (batch: Map<string, { key: K; waiters: Waiter[] }>) => {
    if (batch.size === 1) {
      for (const { key, waiters } of batch.values()) void settleOne(key, waiters);
      return;
    }
    const keys = Array.from(batch.values(), (entry) => entry.key);
    options.readMany(keys).then(
      (rows) => {
        const found = new Map(rows);
        for (const [id, { waiters }] of batch) {
          const value = found.get(id);
          for (const w of waiters) w.resolve(value);
        }
      },
      // The failure may belong to one key (a malformed id, say): every key is read on its own,
      // so each caller gets its own answer or error.
      () => {
        for (const { key, waiters } of batch.values()) void settleOne(key, waiters);
      },
    );
  };

  const flush = () => {
    scheduled = false;
    const all = pending;
    pending = new Map();
    if (all.size <= MAX_BATCH) return run(all);
    let part = new Map<string, { key: K; waiters: Waiter[] }>();
    for (const [id, entry] of all) {
      part.set(id, entry);
      if (part.size === MAX_BATCH) {
        run(part);
        part = new Map();
      }
    }
    if (part.size > 0) run(part);
  };

  return {
    load(key) {
      return new Promise<V | undefined>((resolve, reject) => {
        const id = options.id(key);
        const entry = pending.get(id);
        if (entry) entry.waiters.push({ resolve, reject });
        else pending.set(id, { key, waiters: [{ resolve, reject }] });
        if (!scheduled) {
          scheduled = true;
          // After the I/O callbacks of this turn: every request parsed in it has asked by then.
          setImmediate(flush);
        }
      });
    },
  };
}
