import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { migratedTemplate } from "./pglite-template.ts";

/** An embedded database: a data directory of its own, or "memory". */
export type PgliteTarget = {
  kind: "pglite";
  dataDir: string | "memory";
  /** A new database starts with no schema at all, not from the migrated template (a migration's own test). */
  empty?: boolean;
};

/** PGlite on its way up: its data directory claimed, its WebAssembly loading. */
export type PgliteOpening = {
  client: PGlite;
  /** True when this opening creates the database (from the template) rather than opening one. */
  creates: boolean;
  /** Gives the data directory up (the pid file); after `client.close()`. */
  release: () => void;
};

/** Where a PGlite data directory keeps its database; undefined in memory. */
const pgliteDir = (dataDir: string): string | undefined =>
  dataDir === "memory" ? undefined : join(dataDir, "pglite");

/** True when opening `target` creates an embedded database rather than opening one. */
export function createsPglite(target: PgliteTarget): boolean {
  const dir = pgliteDir(target.dataDir);
  return dir === undefined || !existsSync(dir);
}

/**
 * Claims the data directory and starts PGlite, without waiting for it. `patchbay serve` calls
 * this before it loads the server's code: PGlite reads and compiles its WebAssembly (off the
 * main thread) while the main thread evaluates the bundle (docs/performance.md, "Start-up").
 */
export function beginPglite(target: PgliteTarget): PgliteOpening {
  const creates = createsPglite(target);
  const template = creates && !target.empty ? migratedTemplate() : undefined;
  const release = target.dataDir === "memory" ? () => {} : lockDataDir(target.dataDir);
  try {
    const client = new PGlite(pgliteDir(target.dataDir), template ? { loadDataDir: template } : {});
    return { client, creates, release };
  } catch (error) {
    release();
    throw error;
  }
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
