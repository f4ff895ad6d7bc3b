import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import type { PgliteDatabase } from "drizzle-orm/pglite";
import type { PostgresJsDatabase } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import type { DatabaseHandle, Schema } from "./client.ts";
import { migrationsFolder } from "./pglite-template.ts";
import { rowsOf } from "./result-rows.ts";

/**
 * Applies the committed drizzle-kit migrations. Call inside `withStartupLock`. `folder` is for the
 * tests of a migration, which first stop short of it.
 */
export async function migrateDatabase(handle: DatabaseHandle, folder = migrationsFolder): Promise<void> {
  if (await isUpToDate(handle, folder)) return;
  if (handle.kind === "pglite") {
    const { migrate: migratePglite } = await import("drizzle-orm/pglite/migrator");
    await migratePglite(handle.db as unknown as PgliteDatabase<Schema>, { migrationsFolder: folder });
  } else {
    await migratePostgres(handle.db as unknown as PostgresJsDatabase<Schema>, { migrationsFolder: folder });
  }
}

/**
 * Whether drizzle's migrator would apply nothing: it applies the migrations whose journal time is
 * after the newest applied one's `created_at`. Every start but the first after an upgrade is
 * such a start, and answering it from the journal and one read spares reading and hashing every
 * migration file and the migrator's `create schema/table if not exists` statements (~12 ms of a
 * PGlite start). A database without drizzle's table is not up to date.
 */
async function isUpToDate(handle: DatabaseHandle, folder: string): Promise<boolean> {
  const journal = JSON.parse(await readFile(join(folder, "meta", "_journal.json"), "utf8")) as {
    entries: { when: number }[];
  };
  const newest = Math.max(...journal.entries.map((entry) => entry.when));
  const [table] = rowsOf(
    await handle.db.execute(sql`select to_regclass('drizzle.__drizzle_migrations')::text as name`),
  );
  if (!table?.name) return false;
  const [applied] = rowsOf(
    await handle.db.execute(sql`select max(created_at)::text as newest from drizzle.__drizzle_migrations`),
  );
  return applied?.newest != null && Number(applied.newest) >= newest;
}
