import type { PgliteDatabase } from "drizzle-orm/pglite";
import type { PostgresJsDatabase } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import type { DatabaseHandle, Schema } from "./client.ts";
import { migrationsFolder } from "./pglite-template.ts";

/**
 * Applies the committed drizzle-kit migrations. Call inside `withStartupLock`. `folder` is for the
 * tests of a migration, which first stop short of it.
 */
export async function migrateDatabase(handle: DatabaseHandle, folder = migrationsFolder): Promise<void> {
  if (handle.kind === "pglite") {
    const { migrate: migratePglite } = await import("drizzle-orm/pglite/migrator");
    await migratePglite(handle.db as unknown as PgliteDatabase<Schema>, { migrationsFolder: folder });
  } else {
    await migratePostgres(handle.db as unknown as PostgresJsDatabase<Schema>, { migrationsFolder: folder });
  }
}
