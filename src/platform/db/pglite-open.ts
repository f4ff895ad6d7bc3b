import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
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
  /** PGlite, once its WebAssembly is compiled; then await its `waitReady`. */
  client: Promise<PGlite>;
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
 * Claims the data directory and starts PGlite, without waiting for it. PostgreSQL's WebAssembly
 * (~9 MiB) is compiled here, on V8's background threads: `patchbay serve` calls this before it
 * loads the server's code, so the compilation runs while the main thread evaluates the bundle
 * instead of after it (docs/performance.md, "Start-up"). PGlite left to itself starts compiling
 * only once its own asynchronous set-up gets the main thread, after the bundle.
 */
export function beginPglite(target: PgliteTarget): PgliteOpening {
  const creates = createsPglite(target);
  const template = creates && !target.empty ? migratedTemplate() : undefined;
  const release = target.dataDir === "memory" ? () => {} : lockDataDir(target.dataDir);
  // PGlite's JavaScript (~6 MiB resident) is loaded only where a PGlite database opens: a
  // service on PostgreSQL never holds it.
  const client = Promise.all([compiledPostgres(), import("@electric-sql/pglite")]).then(
    ([pgliteWasmModule, { PGlite }]) =>
      // One options object: PGlite reads its second argument only when the first is a path, so
      // an in-memory database given (undefined, options) would drop them all.
      new PGlite({
        dataDir: pgliteDir(target.dataDir),
        pgliteWasmModule,
        startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
        ...(template ? { loadDataDir: template } : {}),
      }),
  );
  // Released by whoever awaits the client and sees it fail; until then not unhandled.
  client.catch(() => {});
  return { client, creates, release };
}

/**
 * PostgreSQL's buffer pool in an embedded database, in place of the 128MB its data directory's
 * postgresql.conf sets. PostgreSQL in WebAssembly allocates the pool from its linear memory and
 * zeroes it while it starts, on the main thread: with 128MB that cost ~0.1 s of every start and
 * ~110 MiB of resident memory for the process's life. Embedded, a page that is not in the pool is
 * read through PGlite's file system from the operating system's page cache, not from disk.
 * Measured (docs/performance.md, "Start-up"): PostgreSQL's start ~110 ms faster and the peak
 * ~110 MiB lower with 32MB; bench:ingest on PGlite within its noise of 128MB (42–44k spans/s against 41–48k);
 * 64MB kept ~70 % of the start's gain, 16MB added nothing to it.
 */
export const PGLITE_SHARED_BUFFERS = "32MB";

/**
 * PostgreSQL's WebAssembly module, compiled once per process and shared by every PGlite in it,
 * as PGlite itself keeps it.
 */
let compiled: Promise<WebAssembly.Module> | undefined;
function compiledPostgres(): Promise<WebAssembly.Module> {
  if (!compiled) {
    compiled = WebAssembly.compile(readFileSync(artifact("pglite.wasm")));
    compiled.catch(() => {
      compiled = undefined;
    });
  }
  return compiled;
}

/** A file PGlite ships beside its code (package.json `exports`). */
const artifact = (name: string): string =>
  createRequire(import.meta.url).resolve(`@electric-sql/pglite/${name}`);

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
