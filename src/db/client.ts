import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import * as schema from "./schema/index.ts";

export type Schema = typeof schema;
/** A database handle or an open transaction: both run the same queries. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export type DatabaseTarget =
  | { kind: "pglite"; dataDir: string | "memory" }
  | { kind: "postgres"; url: string };

export type DatabaseHandle = {
  kind: DatabaseTarget["kind"];
  db: Db;
  /**
   * Runs `fn` while holding a database-wide advisory lock (PostgreSQL) so two instances
   * starting at once do not both migrate or bootstrap. PGlite is single-process already.
   */
  withStartupLock<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
};

/** Arbitrary constant: "patchbay" in ASCII, used as the advisory-lock key for start-up work. */
const STARTUP_LOCK_KEY = 0x7061746368626179n;

export async function openDatabase(target: DatabaseTarget): Promise<DatabaseHandle> {
  if (target.kind === "pglite") {
    const release = target.dataDir === "memory" ? () => {} : lockDataDir(target.dataDir);
    const client = target.dataDir === "memory" ? new PGlite() : new PGlite(join(target.dataDir, "pglite"));
    await client.waitReady;
    const db = drizzlePglite(client, { schema }) as unknown as Db;
    return {
      kind: "pglite",
      db,
      withStartupLock: (fn) => fn(),
      close: async () => {
        await client.close();
        release();
      },
    };
  }
  const client = postgres(target.url, {
    max: 10,
    onnotice: () => {},
    // Keep timestamps as Date and bigints exact; drizzle maps the rest.
    connection: { application_name: "patchbay" },
  });
  const db = drizzlePostgres(client, { schema }) as unknown as Db;
  return {
    kind: "postgres",
    db,
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
    close: () => client.end({ timeout: 5 }),
  };
}

/** Cheap liveness query for /readyz. */
export async function pingDatabase(db: Db): Promise<void> {
  await db.execute(sql`select 1`);
}

/**
 * PGlite is one process's database: two processes on one data dir would corrupt it. A pid file
 * claims the dir; a stale one (its process is gone) is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, "patchbay.pid");
  try {
    writeFileSync(file, String(process.pid), { flag: "wx" });
  } catch {
    const holder = Number(readFileSync(file, "utf8"));
    if (Number.isInteger(holder) && holder !== process.pid && isAlive(holder)) {
      throw new Error(
        `The data directory ${dataDir} is in use by process ${holder}. Stop it first, or set DATABASE_URL to share a PostgreSQL database between processes.`,
      );
    }
    writeFileSync(file, String(process.pid));
  }
  return () => rmSync(file, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
