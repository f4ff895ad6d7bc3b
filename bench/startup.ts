// bench:startup: how fast patchbay starts and how light it is, each figure beside its floor measured
// in the same run (docs/performance.md, "Start-up"). Floors: `node -e 0`; a bare server on the same
// engine (bench/lib/startup-floor.ts: open PGlite or a postgres.js pool, one query, a bare Hono
// `/readyz`). Runs alternate floor and patchbay, BENCH_RUNS times each (default 3); medians.
//
//   npm run bench:startup                      # PGlite, plus PostgreSQL at PATCHBAY_BENCH_PG
//   PATCHBAY_BENCH_PG=off npm run bench:startup   # PGlite only
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { PGLITE_SHARED_BUFFERS } from "../src/platform/db/pglite-open.ts";
import { freePort } from "./lib/processes.ts";
import { createScratchDatabase } from "./lib/scratch-database.ts";
import { median } from "./lib/stats.ts";

const runs = Number(process.env.BENCH_RUNS ?? 3);
const pgAdminUrl = process.env.PATCHBAY_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432/postgres";
const bin = fileURLToPath(new URL("../bin/patchbay.js", import.meta.url));
const floor = fileURLToPath(new URL("./lib/startup-floor.ts", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "patchbay-bench-startup-"));
let dirs = 0;
const newDir = () => join(scratch, `d${dirs++}`);

type Start = {
  readyMs: number;
  firstOutputMs: number;
  /** VmHWM when /readyz first answered: a snapshot, PGlite's code is still being optimised. */
  peakAtReadyMb: number;
  /** VmHWM after `idleMs` (or at ready without it): the start's peak. */
  peakMb: number;
  idleMb?: number;
  output: string;
};

/**
 * How long a PGlite start is watched after ready for its peak. V8 keeps optimising PGlite's
 * WebAssembly on background threads after the first query: the floor's and patchbay's resident
 * memory both grow by 300–400 MiB in the first second after ready, then fall back to ~350 MiB.
 * A peak read at ready only says how far that had got.
 */
const SETTLE_MS = 5000;

/** `/proc/<pid>/status` field in MiB (VmHWM: peak resident set; VmRSS: now). */
function statusMb(pid: number, field: "VmHWM" | "VmRSS"): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${field}:`));
  return Number(line?.split(/\s+/)[1] ?? Number.NaN) / 1024;
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/**
 * Spawns a server, polls `/readyz` every 10 ms until 200 and reads its peak RSS then; with
 * `idle`, waits that long and reads its RSS again. `keep` leaves it running for the caller.
 */
async function start(
  args: string[],
  env: NodeJS.ProcessEnv,
  opts: { idleMs?: number; keep?: (child: ChildProcess, port: number, start: Start) => Promise<void> } = {},
): Promise<Start> {
  const port = await freePort();
  const began = performance.now();
  const child = spawn(process.execPath, args, {
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let firstOutputMs = Number.NaN;
  const onData = (chunk: Buffer) => {
    if (Number.isNaN(firstOutputMs)) firstOutputMs = performance.now() - began;
    output += chunk.toString();
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  try {
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`${args.join(" ")} exited before it was ready:\n${output}`);
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (performance.now() - began > 180_000) throw new Error(`not ready within 180 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const peakAtReady = statusMb(child.pid as number, "VmHWM");
    const result: Start = {
      readyMs: performance.now() - began,
      firstOutputMs,
      peakAtReadyMb: peakAtReady,
      peakMb: peakAtReady,
      output,
    };
    if (opts.idleMs) {
      await new Promise((r) => setTimeout(r, opts.idleMs));
      result.idleMb = statusMb(child.pid as number, "VmRSS");
      result.peakMb = statusMb(child.pid as number, "VmHWM");
    }
    await opts.keep?.(child, port, result);
    return result;
  } finally {
    await stop(child);
  }
}

/** Wall time of `node <args>` run to completion. */
function timeRun(args: string[], env: NodeJS.ProcessEnv = {}): Promise<number> {
  const began = performance.now();
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { env: { ...process.env, ...env } }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`node ${args.join(" ")}: ${error.message}\n${stderr}`));
      else resolve(performance.now() - began);
    });
  });
}

type Row = { what: string; patchbay: string; floor: string; ratio: number; goal: number };
const rows: Row[] = [];
function row(what: string, mine: number[], theirs: number[], unit: "ms" | "MiB", goal: number) {
  const a = median(mine);
  const b = median(theirs);
  rows.push({
    what,
    patchbay: `${a.toFixed(0)} ${unit}`,
    floor: `${b.toFixed(0)} ${unit}`,
    ratio: a / b,
    goal,
  });
}

/** A patchbay start's environment: its own data directory and dev-chain port, quiet logs. */
async function serveEnv(dataDir: string): Promise<NodeJS.ProcessEnv> {
  return {
    PATCHBAY_DATA_DIR: dataDir,
    PATCHBAY_DEV_CHAIN_PORT: String(await freePort()),
    NODE_ENV: "development",
  };
}

async function main(): Promise<number> {
  console.log(`bench:startup — ${runs} runs each, medians; floors measured in the same run\n`);
  // Warm the OS file cache and V8's compile cache as a second start of the day would find them.
  const existing = newDir();
  let apiKey = "";
  await start([bin, "serve"], await serveEnv(existing), {
    keep: async (_child, _port, s) => {
      apiKey = /Owner API key:\s+(\S+)/.exec(s.output)?.[1] ?? "";
    },
  });
  await start([floor, "pglite"], { PATCHBAY_DATA_DIR: newDir() });

  const nodeE0: number[] = [];
  const version: number[] = [];
  const help: number[] = [];
  for (let i = 0; i < runs; i++) {
    nodeE0.push(await timeRun(["-e", "0"]));
    version.push(await timeRun([bin, "--version"]));
    help.push(await timeRun([bin, "--help"]));
  }
  row("patchbay --version (vs node -e 0)", version, nodeE0, "ms", 2);
  row("patchbay --help (vs node -e 0)", help, nodeE0, "ms", 2);

  // Existing data: ready and peak RSS.
  const mine = {
    ready: [] as number[],
    peak: [] as number[],
    client: [] as number[],
    request: [] as number[],
    bareFetch: [] as number[],
  };
  const theirs = {
    ready: [] as number[],
    peak: [] as number[],
    atReady: [] as number[],
    idle: [] as number[],
  };
  const mineMemory = { atReady: [] as number[], idle: [] as number[] };
  const sameBuffers: number[] = [];
  for (let i = 0; i < runs; i++) {
    const f = await start([floor, "pglite"], { PATCHBAY_DATA_DIR: existing }, { idleMs: SETTLE_MS });
    theirs.ready.push(f.readyMs);
    theirs.peak.push(f.peakMb);
    theirs.atReady.push(f.peakAtReadyMb);
    theirs.idle.push(f.idleMb as number);
    sameBuffers.push(
      (
        await start([floor, "pglite"], {
          PATCHBAY_DATA_DIR: existing,
          FLOOR_SHARED_BUFFERS: PGLITE_SHARED_BUFFERS,
        })
      ).readyMs,
    );
    const p = await start([bin, "serve"], await serveEnv(existing), {
      idleMs: SETTLE_MS,
      // A client command against it, and the same request made directly on a new connection.
      keep: async (_child, port, _s) => {
        const baseUrl = `http://127.0.0.1:${port}`;
        mine.client.push(
          await timeRun([bin, "whoami", "--json"], { PATCHBAY_BASE_URL: baseUrl, PATCHBAY_API_KEY: apiKey }),
        );
        const began = performance.now();
        const res = await fetch(`${baseUrl}/api/v1/me`, {
          headers: { authorization: `Bearer ${apiKey}`, connection: "close" },
        });
        await res.text();
        mine.request.push(performance.now() - began);
        // Node's own floor for a command that makes one request: a new process, one fetch.
        const fetchOnce = `await (await fetch(${JSON.stringify(`${baseUrl}/api/v1/me`)}, { headers: { authorization: "Bearer ${apiKey}" } })).text()`;
        mine.bareFetch.push(await timeRun(["--input-type=module", "-e", fetchOnce]));
      },
    });
    mine.ready.push(p.readyMs);
    mine.peak.push(p.peakMb);
    mineMemory.atReady.push(p.peakAtReadyMb);
    mineMemory.idle.push(p.idleMb as number);
  }
  row("npm start on existing data → /readyz", mine.ready, theirs.ready, "ms", 1.5);
  row(`  peak RSS (start and ${SETTLE_MS / 1000} s after)`, mine.peak, theirs.peak, "MiB", 1.3);
  row(
    `  vs the floor with patchbay's ${PGLITE_SHARED_BUFFERS} buffer pool (no goal)`,
    mine.ready,
    sameBuffers,
    "ms",
    Number.NaN,
  );
  row("  peak RSS read at ready (no goal)", mineMemory.atReady, theirs.atReady, "MiB", Number.NaN);
  row(`  RSS ${SETTLE_MS / 1000} s after ready (no goal)`, mineMemory.idle, theirs.idle, "MiB", Number.NaN);
  const clientFloor = nodeE0.map((n, i) => 4 * n + (mine.request[i] ?? 0));
  row("patchbay whoami (vs 4 × node -e 0 + its request)", mine.client, clientFloor, "ms", 1);
  row("  (vs node -e with one fetch of it: no goal)", mine.client, mine.bareFetch, "ms", Number.NaN);

  // Empty data directory: the first start (demo tenant included), and admin bootstrap.
  const first = { ready: [] as number[], line: [] as number[], peak: [] as number[], boot: [] as number[] };
  const empty = { ready: [] as number[], peak: [] as number[] };
  for (let i = 0; i < runs; i++) {
    const f = await start([floor, "pglite"], { PATCHBAY_DATA_DIR: newDir() }, { idleMs: SETTLE_MS });
    empty.ready.push(f.readyMs);
    empty.peak.push(f.peakMb);
    const p = await start([bin, "serve"], await serveEnv(newDir()), { idleMs: SETTLE_MS });
    first.ready.push(p.readyMs);
    first.line.push(p.firstOutputMs);
    first.peak.push(p.peakMb);
    first.boot.push(await timeRun([bin, "admin", "bootstrap", "--json"], { PATCHBAY_DATA_DIR: newDir() }));
  }
  row("first npm start, empty data dir → /readyz", first.ready, empty.ready, "ms", 2);
  row(`  peak RSS (start and ${SETTLE_MS / 1000} s after)`, first.peak, empty.peak, "MiB", 1.3);
  row("admin bootstrap, empty data dir", first.boot, empty.ready, "ms", 2);
  rows.push({
    what: "  first line printed (goal: within 1 s)",
    patchbay: `${median(first.line).toFixed(0)} ms`,
    floor: "1000 ms",
    ratio: median(first.line) / 1000,
    goal: 1,
  });

  // PostgreSQL: idle RSS after the start has settled.
  if (pgAdminUrl !== "off") {
    const idle = {
      mine: [] as number[],
      theirs: [] as number[],
      ready: [] as number[],
      floorReady: [] as number[],
      code: [] as number[],
    };
    for (let i = 0; i < runs; i++) {
      const db = await createScratchDatabase(pgAdminUrl, "patchbay_bench_startup");
      try {
        const f = await start([floor, "postgres"], { DATABASE_URL: db.url }, { idleMs: 3000 });
        idle.theirs.push(f.idleMb as number);
        idle.floorReady.push(f.readyMs);
        const code = await start([floor, "postgres-code"], { DATABASE_URL: db.url }, { idleMs: 3000 });
        idle.code.push(code.idleMb as number);
        const env = { ...(await serveEnv(newDir())), DATABASE_URL: db.url };
        await start([bin, "serve"], env); // the first start migrates; measure the second
        const p = await start([bin, "serve"], env, { idleMs: 3000 });
        idle.mine.push(p.idleMb as number);
        idle.ready.push(p.readyMs);
      } finally {
        await db.drop();
      }
    }
    // The issue sets the start goal against the PGlite floor; on PostgreSQL it is shown, not judged.
    row("PostgreSQL: npm start → /readyz (no goal)", idle.ready, idle.floorReady, "ms", Number.NaN);
    row("PostgreSQL: idle RSS 3 s after ready", idle.mine, idle.theirs, "MiB", 1.3);
    // The same bare server holding patchbay's code, none of it run: how much of the figure above
    // is code any start must load (routes, schemas, the payment and MCP protocol libraries).
    row("  vs the bare server holding patchbay's code (no goal)", idle.mine, idle.code, "MiB", Number.NaN);
  }

  const width = Math.max(...rows.map((r) => r.what.length));
  console.log(`${"".padEnd(width)}  ${"patchbay".padStart(9)}  ${"floor".padStart(9)}  ratio   goal`);
  for (const r of rows) {
    const verdict = Number.isNaN(r.goal) ? "" : r.ratio <= r.goal ? "met" : "above";
    console.log(
      `${r.what.padEnd(width)}  ${r.patchbay.padStart(9)}  ${r.floor.padStart(9)}  ${r.ratio.toFixed(2).padStart(5)}×  ${Number.isNaN(r.goal) ? "" : `≤ ${r.goal}×  `}${verdict}`,
    );
  }
  return 0;
}

let code = 1;
try {
  code = await main();
} catch (error) {
  console.error(`bench:startup failed: ${error instanceof Error ? (error.stack ?? error.message) : error}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(code);
