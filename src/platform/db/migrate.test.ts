import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, expect, test } from "vitest";
import { createTestDatabase } from "../../../test/database.ts";
import { migrateDatabase } from "./migrate.ts";
import { migrationsFolder } from "./pglite-template.ts";
import { rowsOf } from "./result-rows.ts";

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A copy of the committed migrations, changed by `edit`. */
function migrationsCopy(edit: (folder: string, journal: { entries: { tag: string }[] }) => void): string {
  const folder = mkdtempSync(join(tmpdir(), "patchbay-migrations-"));
  folders.push(folder);
  cpSync(migrationsFolder, folder, { recursive: true });
  const journalPath = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: { tag: string }[] };
  edit(folder, journal);
  writeFileSync(journalPath, JSON.stringify(journal));
  return folder;
}

test("a database as new as the journal is left alone: no migration file is read", async () => {
  const database = await createTestDatabase();
  try {
    // The SQL files are gone: drizzle's migrator would fail reading them.
    const journalOnly = migrationsCopy((folder) => {
      for (const file of readdirSync(folder)) if (file.endsWith(".sql")) rmSync(join(folder, file));
    });
    await migrateDatabase(database.handle, journalOnly);
    // A newer migration in the journal is applied.
    const newer = migrationsCopy((folder, journal) => {
      writeFileSync(join(folder, "9999_probe.sql"), "create table migrate_probe (id integer);");
      journal.entries.push({
        ...(journal.entries.at(-1) as { tag: string }),
        idx: journal.entries.length,
        when: Date.now() + 60_000,
        tag: "9999_probe",
      } as { tag: string });
    });
    await migrateDatabase(database.handle, newer);
    const [probe] = rowsOf(
      await database.handle.db.execute(sql`select to_regclass('migrate_probe')::text as name`),
    );
    expect(probe?.name).toBe("migrate_probe");
  } finally {
    await database.drop();
  }
});

test("a database without drizzle's table is migrated from the start", async () => {
  const database = await createTestDatabase({ migrate: false });
  try {
    await migrateDatabase(database.handle);
    const [applied] = rowsOf(
      await database.handle.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`),
    );
    const journal = JSON.parse(readFileSync(join(migrationsFolder, "meta", "_journal.json"), "utf8")) as {
      entries: unknown[];
    };
    expect(applied?.n).toBe(journal.entries.length);
  } finally {
    await database.drop();
  }
});
