import type { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { beginPglite, createsPglite, type PgliteOpening, type PgliteTarget } from "./pglite-open.ts";
import { postgresSocket, reconnectBackoffSeconds } from "./postgres-socket.ts";
import * as schema from "./schema/index.ts";

export type Schema = typeof schema;
/**
 * A database handle or an open transaction: drizzle's transactions (`PgTransaction`) extend its
 * database class, and both engines' instances fit this type as they are, so code that takes a
 * `Db` runs the same inside and outside a transaction (`withTransaction` joins an open one).
 */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

/**
 * `build` run once per database handle and kept while the handle lives: a prepared statement
 * (named, so PostgreSQL plans it once per connection) or a reader bound to that handle. Tests
 * open many handles in one process, so one module-level value would serve the wrong database.
 */
export function perDatabase<T>(build: (db: Db) => T): (db: Db) => T {
  const built = new WeakMap<Db, T>();
  return (db) => {
    let value = built.get(db);
    if (value === undefined) {
      value = build(db);
      built.set(db, value);
    }
    return value;
  };
}

/**
 * `perDatabase` for statements that come in shapes (which filters, first page or after a
 * cursor): one per database handle and shape key, built by `build` on first use. `build` gets how
 * many shapes that handle already has, for a statement name no other shape uses.
 */
export function perDatabaseShape<T>(): (db: Db, shape: string, build: (index: number) => T) => T {
  const byDatabase = perDatabase((): Map<string, T> => new Map());
  return (db, shape, build) => {
    const built = byDatabase(db);
    let value = built.get(shape);
    if (value === undefined) {
      value = build(built.size);
      built.set(shape, value);
    }
    return value;
  };
}

export type DatabaseTarget = PgliteTarget | { kind: "postgres"; url: string };

export type DatabaseHandle = {
  kind: DatabaseTarget["kind"];
  db: Db;
  /**
   * The handle to build prepared point lookups on: on PostgreSQL, a connection of its own (see
   * POINT_READ_CONNECTIONS); on PGlite, which has a single connection anyway, `db` itself. Only
   * for reads outside a transaction: a committed write is visible to them, and a transaction's
   * own reads stay on the transaction.
   */
  pointReads: Db;
  /** The PGlite client itself (kind "pglite" only): pg-boss's `db` adapter needs PGlite's own API. */
  pglite?: PGlite;
  /** The postgres.js client itself (kind "postgres" only): telemetry ingest streams COPY through it. */
  postgres?: postgres.Sql;
  /**
   * Runs `fn` while holding a database-wide advisory lock (PostgreSQL) so two instances
   * starting at once do not both migrate or bootstrap. PGlite is single-process already.
   */
  withStartupLock<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Subscribes to `LISTEN channel`. Resolves after the first attempt (whether or not it
   * succeeded); a lost connection is re-established in the background. `close()` ends it.
   */
  listen(channel: string, listener: NotificationListener): Promise<Subscription>;
  close(): Promise<void>;
};

/**
 * What a `LISTEN` subscriber is told. Between `onLost` and the next `onListening`,
 * notifications may have been missed: a subscriber that caches must stop trusting its cache.
 */
export type NotificationListener = {
  onNotify(payload: string): void;
  /** LISTEN is in force (first time, or again after a loss). */
  onListening(): void;
  /** The listening connection is gone, or stopped answering. */
  onLost(error: unknown): void;
};

export type Subscription = { close(): Promise<void> };

/** How long connecting to PostgreSQL may take before the waiting queries fail (503). */
export const CONNECT_TIMEOUT_SECONDS = 3;

/** Arbitrary constant: "patchbay" in ASCII, used as the advisory-lock key for start-up work. */
const STARTUP_LOCK_KEY = 0x7061746368626179n;

/**
 * The connection for the per-request point lookups (the API key, the environment): prepared,
 * single-row reads by key, never inside a transaction. Spread over the main pool's ten
 * connections, concurrent requests' lookups each cost a socket write and a PostgreSQL backend
 * wake-up of their own. On one connection postgres.js pipelines them: one write carries the
 * lookups of every request handled in the same event-loop turn, and one backend answers them
 * back to back. That cut patchbay's CPU per lookup by more than half and PostgreSQL's by a
 * quarter or more (docs/performance.md, "REST API").
 *
 * The trade-off: an instance's point lookups share one backend, so they are bounded by one
 * PostgreSQL core (~20 µs each here: some 40k lookups/s, well above what one Node process
 * serves), and each waits for those queued before it (microseconds; plain MVCC reads never
 * wait on row locks). Being apart from the main pool, they never queue behind long
 * transactions (COPY ingest, row locks), and nothing holding this connection waits for another.
 */
const POINT_READ_CONNECTIONS = 1;

/** True when opening `target` creates an embedded database rather than opening one. */
export const createsDatabase = (target: DatabaseTarget): boolean =>
  target.kind === "pglite" && createsPglite(target);

/**
 * Opens `target`. With PGlite, `opening` is one already started (`beginPglite`) for the same
 * target; without, it is started here.
 */
export async function openDatabase(target: DatabaseTarget, opening?: PgliteOpening): Promise<DatabaseHandle> {
  if (target.kind === "pglite") {
    const started = opening ?? beginPglite(target);
    let client: PGlite;
    try {
      client = await started.client;
      await client.waitReady;
    } catch (error) {
      started.release();
      throw error;
    }
    const release = started.release;
    const { drizzle: drizzlePglite } = await import("drizzle-orm/pglite");
    const db: Db = drizzlePglite(client, { schema });
    return {
      kind: "pglite",
      db,
      pointReads: db,
      pglite: client,
      withStartupLock: (fn) => fn(),
      // In-process: the "connection" cannot drop, and a notification is delivered before the
      // COMMIT that sent it resolves.
      async listen(channel, listener) {
        const unlisten = await client.listen(channel, (payload) => listener.onNotify(payload));
        listener.onListening();
        return { close: () => unlisten() };
      },
      close: async () => {
        await client.close();
        release();
      },
    };
  }
  const options = {
    max: 10,
    // Server-side prepared statements for queries built with drizzle's `.prepare()` (drizzle
    // passes `prepare: true` for those and `false` for the rest). This is postgres.js's
    // default, spelled out because turning it off would silently re-plan every hot query.
    prepare: true,
    onnotice: () => {},
    connection: { application_name: "patchbay" },
    // A query waits at most this long for a connection to come up: while the server is away a
    // request fails fast with database_unavailable (503) instead of hanging for the default 30 s.
    connect_timeout: CONNECT_TIMEOUT_SECONDS,
    backoff: reconnectBackoffSeconds,
    // TCP_NODELAY, and failing fast behind a proxy (postgres-socket.ts). postgres.js supports
    // the option; its typings do not declare it, so the object is built first.
    socket: postgresSocket(),
  };
  const client = postgres(target.url, options);
  const db: Db = drizzlePostgres(preparingEveryQuery(client), { schema });
  // Each pool its own socket factory: a factory takes turns over a multi-host URL's hosts.
  const pointOptions = {
    ...options,
    max: POINT_READ_CONNECTIONS,
    connection: { application_name: "patchbay-reads" },
    socket: postgresSocket(),
  };
  const pointClient = postgres(target.url, pointOptions);

  const subscriptions = new Set<Subscription>();
  return {
    kind: "postgres",
    db,
    pointReads: drizzlePostgres(preparingEveryQuery(pointClient), { schema }),
    postgres: client,
    async listen(channel, listener) {
      const subscription = await listenPostgres(target.url, channel, listener);
      subscriptions.add(subscription);
      return {
        close: async () => {
          subscriptions.delete(subscription);
          await subscription.close();
        },
      };
    },
    async withStartupLock(fn) {
      const reserved = await client.reserve();
      try {
        await reserved`select pg_advisory_lock(${STARTUP_LOCK_KEY.toString()}::bigint)`;
        return await fn();
      } finally {
        await reserved`select pg_advisory_unlock(${STARTUP_LOCK_KEY.toString()}::bigint)`.catch(() => {});
        reserved.release();
      }
    },
    close: async () => {
      await Promise.all([...subscriptions].map((s) => s.close()));
      await Promise.all([client.end({ timeout: 5 }), pointClient.end({ timeout: 5 })]);
    },
  };
}

/**
 * The client drizzle runs on, with every parameterised query prepared. drizzle hands postgres.js
 * `prepare: false` for any query not built with `.prepare(name)`, and postgres.js then sends it
 * unnamed *and describes it first*: two round trips (Parse/Describe/Sync, then Bind/Execute),
 * each a socket write and a backend wake-up, and PostgreSQL parses and plans it every time. That
 * was most of the gap between an ordinary read and the prepared environment lookup
 * (docs/performance.md, "REST API"). Prepared, a query costs one Bind/Execute round trip from its
 * second use on a connection, and PostgreSQL reuses the parse (and, after five runs, a generic
 * plan when it is as cheap).
 *
 * postgres.js keys its statements by query text and parameter types, per connection; the texts
 * come from the code (a list's length is the only variable part: `in ($1, …, $n)`), and a
 * connection's statements go with it at `max_lifetime` (30–60 min). Queries without parameters
 * keep the simple protocol (migrations send several statements in one). Transactions and
 * savepoints get the same client.
 */
function preparingEveryQuery(sql: postgres.Sql): postgres.Sql {
  type Unsafe = postgres.Sql["unsafe"];
  type Scoped = (callback: (scoped: postgres.TransactionSql) => unknown) => unknown;
  const wrapScope =
    (original: (...args: unknown[]) => unknown) =>
    (...args: unknown[]) =>
      original(
        ...args.map((arg) =>
          typeof arg === "function"
            ? (scoped: postgres.Sql) => (arg as (s: postgres.Sql) => unknown)(preparingEveryQuery(scoped))
            : arg,
        ),
      );
  return new Proxy(sql, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (property === "unsafe") {
        const unsafe = value as Unsafe;
        return ((query: string, parameters?: unknown[], queryOptions?: postgres.UnsafeQueryOptions) =>
          unsafe.call(
            target,
            query,
            parameters as postgres.ParameterOrJSON<never>[],
            Array.isArray(parameters) && parameters.length > 0
              ? { ...queryOptions, prepare: true }
              : queryOptions,
          )) as Unsafe;
      }
      if ((property === "begin" || property === "savepoint") && typeof value === "function") {
        return wrapScope((value as Scoped).bind(target) as (...args: unknown[]) => unknown);
      }
      return value;
    },
  });
}

/** A listener that has not heard back from its connection in this long is treated as lost. */
const LISTEN_HEARTBEAT_MS = 10_000;
const LISTEN_HEARTBEAT_TIMEOUT_MS = 5_000;
const LISTEN_RETRY_MAX_MS = 5_000;

/**
 * LISTEN on a dedicated connection, with our own loss detection. postgres.js's `sql.listen`
 * re-listens after a drop but never says that it dropped (and gives up silently when the
 * re-listen fails), so a cache could not know that it missed notifications. Here a drop — a
 * closed socket, or a heartbeat that goes unanswered (a half-open connection) — is reported
 * through `onLost`, and each retry uses a fresh connection.
 */
async function listenPostgres(
  url: string,
  channel: string,
  listener: NotificationListener,
): Promise<Subscription> {
  let closed = false;
  let current: postgres.Sql | undefined;
  let listening = false;
  let retryMs = 100;
  let retryTimer: NodeJS.Timeout | undefined;
  let heartbeatTimer: NodeJS.Timeout | undefined;

  const lost = (sql: postgres.Sql, error: unknown) => {
    if (current !== sql) return; // a stale connection's late news
    current = undefined;
    clearInterval(heartbeatTimer);
    void sql.end({ timeout: 0 }).catch(() => {});
    if (listening) {
      listening = false;
      listener.onLost(error);
    }
    if (closed) return;
    retryTimer = setTimeout(() => void attempt(), retryMs);
    retryTimer.unref();
    retryMs = Math.min(retryMs * 2, LISTEN_RETRY_MAX_MS);
  };

  const attempt = async () => {
    // `onnotify` is the hook postgres.js's own `listen` uses; its typings do not declare it,
    // so the options object is built first and passed as a whole.
    const options = {
      max: 1,
      max_lifetime: null,
      connect_timeout: CONNECT_TIMEOUT_SECONDS,
      fetch_types: false,
      onnotice: () => {},
      connection: { application_name: "patchbay-listen" },
      socket: postgresSocket(),
      onnotify: (name: string, payload: string) => {
        if (name === channel && current === sql) listener.onNotify(payload);
      },
      onclose: () => lost(sql, new Error("the LISTEN connection closed")),
    };
    const sql = postgres(url, options);
    current = sql;
    try {
      await sql`listen ${sql(channel)}`;
    } catch (error) {
      lost(sql, error);
      return;
    }
    if (closed || current !== sql) return;
    listening = true;
    retryMs = 100;
    listener.onListening();
    heartbeatTimer = setInterval(() => void heartbeat(sql), LISTEN_HEARTBEAT_MS);
    heartbeatTimer.unref();
  };

  const heartbeat = (sql: postgres.Sql) =>
    within(sql`select 1`, LISTEN_HEARTBEAT_TIMEOUT_MS, "the LISTEN connection stopped answering").catch(
      (error: unknown) => lost(sql, error),
    );

  await attempt();
  return {
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      clearInterval(heartbeatTimer);
      const sql = current;
      current = undefined;
      listening = false;
      if (sql) await sql.end({ timeout: 1 }).catch(() => {});
    },
  };
}

/** /readyz answers within this long, whatever the database does. */
export const READINESS_TIMEOUT_MS = 900;

/**
 * Readiness: a trivial query on the main pool and on the point-read connection (a request needs
 * both), each within `READINESS_TIMEOUT_MS`. Rejects when either fails or is late, so a pool that
 * cannot reach the server is reported rather than hidden behind one that can.
 */
export async function pingDatabase(database: DatabaseHandle): Promise<void> {
  const handles = new Set([database.db, database.pointReads]);
  await within(
    Promise.all([...handles].map((h) => h.execute(sql`select 1`))),
    READINESS_TIMEOUT_MS,
    `the database did not answer within ${READINESS_TIMEOUT_MS} ms`,
  );
}

/** `work`'s outcome, or an error saying `late` when it takes longer than `ms`. */
async function within<T>(work: Promise<T>, ms: number, late: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(late)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
