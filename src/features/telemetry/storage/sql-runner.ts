import type { PGlite, Transaction } from "@electric-sql/pglite";
import type postgres from "postgres";
import type { DatabaseHandle } from "../../../platform/db/client.ts";

export type CopyFormat = "text" | "binary";

/** One statement's rows, as the driver decoded them. */
export type Row = Record<string, unknown>;

/** The few operations the telemetry writer needs, on either engine, inside one transaction. */
export type SqlRunner = {
  /** One statement with positional parameters (`$1`, …). */
  query(text: string, params: unknown[]): Promise<Row[]>;
  /**
   * `COPY <target> FROM STDIN` of `data` (or of its parts in order, as one stream): text format,
   * UTF-8 (copy-text.ts), or binary (copy-binary.ts).
   */
  copyIn(target: string, data: Buffer | Buffer[], format?: CopyFormat): Promise<void>;
};

export type TelemetryDatabase = {
  /** Runs `fn` in a transaction: everything it wrote is committed together, or nothing. */
  transaction<T>(fn: (run: SqlRunner) => Promise<T>): Promise<T>;
};

/** The raw drivers under drizzle, for the ingest writes: COPY has no drizzle API. */
export function telemetryDatabase(handle: DatabaseHandle): TelemetryDatabase {
  if (handle.postgres) return postgresDatabase(handle.postgres);
  if (handle.pglite) return pgliteDatabase(handle.pglite);
  throw new Error("telemetryDatabase: the database handle carries neither a postgres.js nor a PGlite client");
}

function postgresDatabase(sql: postgres.Sql): TelemetryDatabase {
  return {
    async transaction(fn) {
      const result = await sql.begin((tx) =>
        fn({
          // Prepared when it has parameters (fixed texts): `unsafe` otherwise parses and plans anew
          // on every call, ~10 % of PostgreSQL's CPU in full ingest for the problem upsert alone.
          query: (text, params) =>
            tx.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: params.length > 0 }),
          copyIn: (target, data, format = "text") => copyInPostgres(tx, target, data, format),
        }),
      );
      return result as Awaited<ReturnType<typeof fn>>;
    },
  };
}

/**
 * COPY through postgres.js. A failure reported after the client ended the COPY (a duplicate key)
 * never reaches the COPY's stream, whose end callback would wait forever, so a statement queued
 * right behind it carries the news: inside the failed transaction it is refused (25P02).
 */
async function copyInPostgres(
  tx: postgres.TransactionSql,
  target: string,
  data: Buffer | Buffer[],
  format: CopyFormat,
): Promise<void> {
  const parts = Array.isArray(data) ? data : [data];
  const stream = await tx.unsafe(`copy ${target} from stdin with (format ${format})`).writable();
  let failure: unknown;
  const finished = new Promise<void>((resolve, reject) => {
    stream.on("error", (error) => {
      failure = error;
      reject(error);
    });
    stream.on("finish", resolve);
  });
  finished.catch(() => {});
  // The last write's callback comes after all went out; a lost connection may never call it,
  // so the stream's error ends the wait instead.
  for (const part of parts.slice(0, -1)) stream.write(part);
  await Promise.race([
    new Promise<void>((resolve, reject) =>
      stream.write(parts.at(-1) ?? Buffer.alloc(0), (error) => (error ? reject(error) : resolve())),
    ),
    finished,
  ]);
  if (failure) throw failure;
  // With no write pending, end() takes the connection out of COPY mode at once; only then may
  // another statement be queued on it.
  stream.end();
  const probe = tx.unsafe("select 1");
  await Promise.race([finished, probe]);
  await probe;
}

function pgliteDatabase(pglite: PGlite): TelemetryDatabase {
  const runner = (tx: Transaction): SqlRunner => ({
    query: async (text, params) => (await tx.query<Row>(text, params)).rows,
    // PGlite reads COPY data from a Blob standing in for the file /dev/blob.
    copyIn: async (target, data, format = "text") => {
      await tx.query(`copy ${target} from '/dev/blob' with (format ${format})`, [], {
        blob: new Blob(
          (Array.isArray(data) ? data : [data]).map(
            (part) => new Uint8Array(part.buffer as ArrayBuffer, part.byteOffset, part.byteLength),
          ),
        ),
      });
    },
  });
  return { transaction: (fn) => pglite.transaction((tx) => fn(runner(tx))) };
}
