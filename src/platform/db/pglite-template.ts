import { createHash } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// A migrated, empty PGlite database as a data-directory tarball, made at install
// (scripts/build.ts) and loaded (PGlite's `loadDataDir`) wherever a new PGlite database starts:
// a first start on an empty data directory, `admin bootstrap`, and every test file's database.
// Creating a PGlite cluster (its initdb) and then applying the migrations takes ~2 s of
// WebAssembly; loading the tarball ~0.4 s. Without a current template (none built, or the
// migrations changed since), databases are created and migrated as before: the template only
// ever saves time, and the migrations still run (finding nothing to do) after it is loaded.

/** The committed drizzle-kit migrations. */
export const migrationsFolder = fileURLToPath(new URL("./migrations", import.meta.url));

const templateFile = fileURLToPath(new URL("../../../dist/pglite-template.tar", import.meta.url));
const versionFile = `${templateFile}.version`;

let version: string | undefined;

/**
 * What a template holds: the migrations (their journal) and the PGlite release that wrote it.
 * Read once per process: every new database asks.
 */
function schemaVersion(): string {
  version ??= hashSchema();
  return version;
}

function hashSchema(): string {
  const journal = readFileSync(join(migrationsFolder, "meta", "_journal.json"));
  const manifest = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    dependencies: Record<string, string>;
  };
  return createHash("sha256")
    .update(journal)
    .update(manifest.dependencies["@electric-sql/pglite"] ?? "")
    .digest("hex");
}

/** Whether dist/ holds a template of the current migrations. */
export function hasMigratedTemplate(): boolean {
  try {
    return readFileSync(versionFile, "utf8") === schemaVersion();
  } catch {
    return false;
  }
}

/** The template for the current migrations, or undefined when there is none. */
export function migratedTemplate(): Blob | undefined {
  try {
    return hasMigratedTemplate() ? new Blob([readFileSync(templateFile)]) : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the template (a new in-memory database, migrated, dumped); the version file last. */
export async function buildMigratedTemplate(): Promise<void> {
  const [{ PGlite }, { drizzle }, { migrate }] = await Promise.all([
    import("@electric-sql/pglite"),
    import("drizzle-orm/pglite"),
    import("drizzle-orm/pglite/migrator"),
  ]);
  const client = new PGlite();
  try {
    await migrate(drizzle(client), { migrationsFolder });
    const dump = await client.dumpDataDir("none");
    const staging = `${templateFile}.${process.pid}`;
    writeFileSync(staging, Buffer.from(await dump.arrayBuffer()));
    renameSync(staging, templateFile);
    writeFileSync(`${versionFile}.${process.pid}`, schemaVersion());
    renameSync(`${versionFile}.${process.pid}`, versionFile);
  } finally {
    await client.close();
  }
}
