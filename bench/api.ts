/**
 * `npm run bench:api`: requests/s and latency of patchbay's `GET /api/v1/environments/{id}`
 * (API-key authenticated, read from the database) next to a bare Hono route serving the same JSON
 * from memory — on PGlite and on PostgreSQL, in one run. See docs/performance.md.
 *
 * Every server runs in its own child process and the targets are measured one after another, so
 * the load generator never shares an event loop with the server and two servers never compete.
 *
 * Env: BENCH_SECONDS (measured window per target, default 8), BENCH_WARMUP_SECONDS (2),
 * BENCH_CONNECTIONS (32), BENCH_LOG_LEVEL (patchbay's LOG_LEVEL, default warn),
 * BENCH_PG_URL (admin URL, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_TARGETS (comma list of bare,pglite,postgres; default all),
 * BENCH_CPU_PROF_DIR (write a V8 CPU profile of each patchbay server there).
 *
 * Exit code: 0 when the run worked (whether or not the goal is met), 1 on any failed request or error.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { request } from "undici";
import { bootstrapTenant } from "./lib/bootstrap.ts";
import { type LoadResult, runLoad } from "./lib/load.ts";
import {
  type Child,
  freePort,
  machineCpuSeconds,
  postgresCpuSeconds,
  processCpuSeconds,
  startNode,
  waitForHttp,
} from "./lib/processes.ts";
import { runBench } from "./lib/run-bench.ts";
import { createScratchDatabase } from "./lib/scratch-database.ts";

const root = resolve(import.meta.dirname, "..");
const patchbayBin = join(root, "bin", "patchbay.js");
const bareServer = join(root, "bench", "lib", "bare-server.ts");

/** Goal from the issue: patchbay on PostgreSQL reaches this share of the bare route's req/s. */
const GOAL_RATIO = 0.4;

type TargetName = "bare" | "pglite" | "postgres";
const allTargets: TargetName[] = ["bare", "pglite", "postgres"];

const settings = {
  seconds: positiveNumber("BENCH_SECONDS", 8),
  warmupSeconds: positiveNumber("BENCH_WARMUP_SECONDS", 2),
  connections: Math.round(positiveNumber("BENCH_CONNECTIONS", 32)),
  logLevel: process.env.BENCH_LOG_LEVEL || "warn",
  pgUrl: process.env.BENCH_PG_URL || "postgres://postgres@127.0.0.1:5432/postgres",
  targets: parseTargets(process.env.BENCH_TARGETS),
  cpuProfDir: process.env.BENCH_CPU_PROF_DIR ? resolve(process.env.BENCH_CPU_PROF_DIR) : undefined,
};

/** % of one core over the measured window; null where /proc is unavailable or not applicable. */
type CpuBreakdown = { server: number | null; db: number | null; client: number | null; other: number | null };

type Measurement = LoadResult & { target: TargetName; label: string; cpu: CpuBreakdown };

/** Above this much CPU (% of one core) used by unrelated processes during a window, the figures are suspect. */
const NOISY_OTHER_CPU = 25;

type Bootstrap = { environmentId: string; apiKey: string };

const children = new Set<Child>();
const interrupt = new AbortController();
const cleanups: Array<() => Promise<void>> = [];
const t0 = performance.now();

function log(message: string) {
  const s = ((performance.now() - t0) / 1000).toFixed(1).padStart(5);
  process.stderr.write(`[${s}s] ${message}\n`);
}

async function main(): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), "patchbay-bench-"));
  cleanups.push(async () => rmSync(work, { recursive: true, force: true }));
  if (settings.cpuProfDir) mkdirSync(settings.cpuProfDir, { recursive: true });

  console.log(
    `patchbay bench:api — ${availableParallelism()} × ${cpus()[0]?.model ?? "unknown CPU"}, node ${process.version}\n` +
      `GET /api/v1/environments/{id}, ${settings.connections} connections, ` +
      `${settings.warmupSeconds} s warm-up + ${settings.seconds} s measured per target, patchbay LOG_LEVEL=${settings.logLevel}\n`,
  );

  const results = new Map<TargetName, Measurement>();
  let body: string | undefined;

  // PGlite first: its response is also the document the bare baseline serves.
  if (settings.targets.includes("pglite") || settings.targets.includes("bare")) {
    const dataDir = join(work, "pglite");
    const env = patchbayEnv({ PATCHBAY_DATA_DIR: dataDir });
    log("PGlite: bootstrapping a fresh data directory (migrations + organisation + API key)");
    const boot = await bootstrap(env);
    body = await withPatchbay("patchbay (PGlite)", env, work, async (base, child) => {
      const fetched = await fetchEnvironment(base, boot);
      if (settings.targets.includes("pglite")) {
        results.set("pglite", await measure("pglite", "patchbay, PGlite", base, boot, fetched, child));
      }
      return fetched;
    });
  }

  if (settings.targets.includes("bare")) {
    if (body === undefined) throw new Error("no document for the bare baseline");
    const document = body;
    const port = await freePort();
    const child = track(
      startNode(
        "bare Hono",
        [bareServer],
        { ...process.env, PORT: String(port), HOST: "127.0.0.1", BENCH_BODY: document },
        join(work, "bare.log"),
      ),
    );
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitForHttp(`${base}/healthz`, child);
      const boot = { environmentId: environmentIdOf(document), apiKey: "" };
      results.set("bare", await measure("bare", "bare Hono, in-memory", base, boot, document, child));
    } finally {
      await child.stop();
      children.delete(child);
    }
  }

  if (settings.targets.includes("postgres")) {
    const database = await createScratchDatabase(settings.pgUrl, "patchbay_bench");
    log(`PostgreSQL: created database ${database.name}`);
    cleanups.push(async () => {
      await database.drop().catch((error: unknown) => {
        log(`could not drop database ${database.name}: ${String(error)}`);
      });
    });
    const env = patchbayEnv({ PATCHBAY_DATA_DIR: join(work, "postgres"), DATABASE_URL: database.url });
    log("PostgreSQL: bootstrapping (migrations + organisation + API key)");
    const boot = await bootstrap(env);
    await withPatchbay("patchbay (PostgreSQL)", env, work, async (base, child) => {
      const fetched = await fetchEnvironment(base, boot);
      results.set("postgres", await measure("postgres", "patchbay, PostgreSQL", base, boot, fetched, child));
    });
  }

  return report(results);
}

/** The environment for a patchbay child: development mode (no KEK/base URL needed), quiet logs. */
function patchbayEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    // One key at thousands of requests a second: limits this high keep the limiter on the measured
    // path without refusing (the environment may override them, e.g. 0 to measure without).
    PATCHBAY_RATE_LIMIT_KEY_PER_MINUTE: "1000000000",
    PATCHBAY_RATE_LIMIT_ORG_PER_MINUTE: "1000000000",
    ...process.env,
    NODE_ENV: "development",
    LOG_LEVEL: settings.logLevel,
    ...extra,
  };
  if (!extra.DATABASE_URL) delete env.DATABASE_URL;
  delete env.PATCHBAY_KEK;
  delete env.PATCHBAY_BASE_URL;
  return env;
}

function bootstrap(env: NodeJS.ProcessEnv): Promise<Bootstrap> {
  return bootstrapTenant(patchbayBin, env, interrupt.signal);
}

/** Starts `patchbay serve` on a free port, runs `fn` against it, and stops it (gracefully). */
async function withPatchbay<T>(
  name: string,
  env: NodeJS.ProcessEnv,
  work: string,
  fn: (base: string, child: Child) => Promise<T>,
): Promise<T> {
  const port = await freePort();
  const args = settings.cpuProfDir
    ? [`--cpu-prof`, `--cpu-prof-dir=${settings.cpuProfDir}`, patchbayBin, "serve"]
    : [patchbayBin, "serve"];
  const logFile = join(work, `${name.replace(/\W+/g, "-")}.log`);
  log(`${name}: starting on port ${port}`);
  const child = track(startNode(name, args, { ...env, PORT: String(port), HOST: "127.0.0.1" }, logFile));
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/healthz`, child);
    return await fn(base, child);
  } finally {
    await child.stop();
    children.delete(child);
  }
}

async function fetchEnvironment(base: string, boot: Bootstrap): Promise<string> {
  const res = await request(`${base}/api/v1/environments/${boot.environmentId}`, {
    headers: { authorization: `Bearer ${boot.apiKey}` },
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET environment answered ${res.statusCode}: ${text}`);
  return text;
}

function environmentIdOf(document: string): string {
  const parsed: unknown = JSON.parse(document);
  if (typeof parsed === "object" && parsed !== null && "id" in parsed && typeof parsed.id === "string") {
    return parsed.id;
  }
  throw new Error("the environment document has no id");
}

/** CPU counters sampled at both edges of the measured window, all in seconds. */
type CpuSample = {
  server: number | null;
  db: number | null;
  client: number;
  machine: { busy: number; total: number } | null;
};

function sampleCpu(serverPid: number, withPostgres: boolean): CpuSample {
  const self = process.cpuUsage();
  return {
    server: processCpuSeconds(serverPid),
    db: withPostgres ? postgresCpuSeconds() : null,
    client: (self.user + self.system) / 1e6,
    machine: machineCpuSeconds(),
  };
}

async function measure(
  target: TargetName,
  label: string,
  base: string,
  boot: Bootstrap,
  expectBody: string,
  child: Child,
): Promise<Measurement> {
  log(`${label}: ${settings.warmupSeconds} s warm-up + ${settings.seconds} s measured`);
  const samples: Partial<Record<"start" | "end", CpuSample>> = {};
  const result = await runLoad({
    url: `${base}/api/v1/environments/${boot.environmentId}`,
    headers: boot.apiKey ? { authorization: `Bearer ${boot.apiKey}` } : {},
    connections: settings.connections,
    warmupMs: settings.warmupSeconds * 1000,
    durationMs: settings.seconds * 1000,
    expectBody,
    signal: interrupt.signal,
    onWindow(edge) {
      samples[edge] = sampleCpu(child.pid, target === "postgres");
    },
  });
  interrupt.signal.throwIfAborted();
  if (result.errors) log(`${label}: ${result.errors} failed requests`);
  return { ...result, target, label, cpu: cpuBreakdown(samples.start, samples.end) };
}

/** Per-party CPU over the window in % of one core; `other` is whatever else kept the machine busy. */
function cpuBreakdown(start: CpuSample | undefined, end: CpuSample | undefined): CpuBreakdown {
  if (!start || !end) return { server: null, db: null, client: null, other: null };
  const wall =
    end.machine && start.machine ? (end.machine.total - start.machine.total) / availableParallelism() : 0;
  if (wall <= 0) return { server: null, db: null, client: null, other: null };
  const pct = (a: number | null, b: number | null) =>
    a === null || b === null ? null : ((b - a) / wall) * 100;
  const server = pct(start.server, end.server);
  const db = pct(start.db, end.db);
  const client = pct(start.client, end.client);
  const busy = pct(start.machine?.busy ?? null, end.machine?.busy ?? null);
  const other = busy === null ? null : Math.max(0, busy - (server ?? 0) - (db ?? 0) - (client ?? 0));
  return { server, db, client, other };
}

function track(child: Child): Child {
  children.add(child);
  return child;
}

function report(results: Map<TargetName, Measurement>): number {
  const bare = results.get("bare");
  const rows = allTargets.flatMap((t) => {
    const r = results.get(t);
    return r ? [r] : [];
  });
  const header = [
    "target",
    "req/s",
    "p50 ms",
    "p99 ms",
    "errors",
    "vs bare",
    "CPU server",
    "db",
    "client",
    "other",
    "µs/req",
  ];
  const cpu = (v: number | null) => (v === null ? "—" : `${v.toFixed(0)} %`);
  const table = rows.map((r) => [
    r.label,
    r.rps.toFixed(0),
    r.p50Ms.toFixed(2),
    r.p99Ms.toFixed(2),
    String(r.errors),
    bare ? `${((r.rps / bare.rps) * 100).toFixed(1)} %` : "—",
    cpu(r.cpu.server),
    cpu(r.cpu.db),
    cpu(r.cpu.client),
    cpu(r.cpu.other),
    cpuPerRequest(r)?.toFixed(0) ?? "—",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of table) console.log(line(row));
  console.log(
    `\nCPU over the measured window, % of one core (${availableParallelism()} cores = ${availableParallelism() * 100} %):` +
      " server = the server process (PGlite runs inside it), db = PostgreSQL's processes," +
      " client = this load generator, other = everything else on the machine." +
      " µs/req = CPU time of server + db per response.",
  );
  for (const r of rows) {
    if (r.cpu.other !== null && r.cpu.other > NOISY_OTHER_CPU) {
      console.log(
        `WARNING: other processes used ${r.cpu.other.toFixed(0)} % of a core during "${r.label}": its figures are disturbed; rerun on a quiet machine.`,
      );
    }
  }

  const pg = results.get("postgres");
  if (pg && bare) {
    const ratio = pg.rps / bare.rps;
    const verdict = ratio >= GOAL_RATIO ? "MET" : "NOT MET";
    console.log(
      `\nGoal (patchbay on PostgreSQL ≥ ${GOAL_RATIO * 100} % of the bare route's req/s): ${verdict} — ${(ratio * 100).toFixed(1)} %`,
    );
    // The req/s ratio depends on who gets the cores: the bare run is bound by the load
    // generator (it needs a core of its own), patchbay by its server and PostgreSQL. The CPU
    // per response says what each would reach on the same cores with the generator elsewhere.
    const bareCost = cpuPerRequest(bare);
    const pgCost = cpuPerRequest(pg);
    if (bareCost && pgCost) {
      const equalCpu = ((bareCost / pgCost) * 100).toFixed(1);
      console.log(
        `At equal CPU (server + database CPU per response, load generator excluded): ${equalCpu} %` +
          ` — bare ${bareCost.toFixed(0)} µs, patchbay on PostgreSQL ${pgCost.toFixed(0)} µs per response`,
      );
    }
  } else {
    console.log("\nGoal not evaluated: it needs both the bare and the postgres targets.");
  }

  const failed = rows.filter((r) => r.errors > 0);
  for (const r of failed) {
    console.log(`\n${r.label}: ${r.errors} failed requests`);
    for (const sample of r.errorSamples) console.log(`  ${sample}`);
  }
  if (failed.length) {
    console.log("\nFAILED: a run with failed requests does not count.");
    return 1;
  }
  return 0;
}

/** Server + database CPU time per successful response, in µs; null without CPU figures. */
function cpuPerRequest(r: Measurement): number | null {
  if (r.cpu.server === null || r.rps <= 0) return null;
  return (((r.cpu.server + (r.cpu.db ?? 0)) / 100) * 1e6) / r.rps;
}

function positiveNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got ${raw}`);
  return value;
}

function parseTargets(raw: string | undefined): TargetName[] {
  if (!raw) return allTargets;
  const names = raw.split(",").map((s) => s.trim());
  const targets = allTargets.filter((t) => names.includes(t));
  const unknown = names.filter((n) => !allTargets.some((t) => t === n));
  if (unknown.length || !targets.length) {
    throw new Error(`BENCH_TARGETS must be a comma list of ${allTargets.join(", ")}; got ${raw}`);
  }
  return targets;
}

let stopping: Promise<void> | undefined;

/** Stops every child and runs the clean-ups once; later callers wait for the same run. */
function shutdown(): Promise<void> {
  stopping ??= (async () => {
    await Promise.all([...children].map((c) => c.stop(5_000)));
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  })();
  return stopping;
}

await runBench({ name: "bench:api", main, shutdown, interrupt, log, startedAt: t0 });
