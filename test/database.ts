import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { type DatabaseHandle, openDatabase } from "../src/platform/db/client.ts";
import { migrateDatabase } from "../src/platform/db/migrate.ts";

/**
 * The PostgreSQL server for the `test:pg` lane (`PATCHBAY_TEST_PG`, a maintenance URL such as
 * postgres://postgres@127.0.0.1:5432/postgres). Unset: every test file gets an in-memory PGlite.
 */
export const testPgUrl = process.env.PATCHBAY_TEST_PG;

/**
 * A fresh database for one test file, dropped again by `drop()`; migrated unless `migrate` is false
 * (a migration's own test).
 */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<{
  handle: DatabaseHandle;
  url?: string;
  drop(): Promise<void>;
}> {
  if (!testPgUrl) {
    const handle = await openDatabase({
      kind: "pglite",
      dataDir: "memory",
      empty: options.migrate === false,
    });
    if (options.migrate !== false) await migrateDatabase(handle);
    return { handle, drop: () => handle.close() };
  }
  const name = `patchbay_test_${randomBytes(6).toString("hex")}`;
  const admin = postgres(testPgUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(testPgUrl);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ kind: "postgres", url: url.toString() });
  if (options.migrate !== false) await migrateDatabase(handle);
  return {
    handle,
    url: url.toString(),
    async drop() {
      await handle.close();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}
