/**
 * `npm run bench:ingest`: OTLP trace ingest throughput in spans/s — decode-only next to full
 * ingest (key check, admission, body read, decode, validate, store, group problems) — on PGlite and
 * on PostgreSQL, in one run, with peak memory. See docs/performance.md.
 *
 * Each engine runs in its own child process and gets a fresh database (a temporary PGlite data
 * directory; a PostgreSQL database created and dropped by the bench). Requests are SDK-shaped protobuf export bodies of 512 spans
 * (bench/lib/otlp-batches.ts, ~2 % of spans with an exception event), each with fresh ids. Full
 * ingest runs them through the real OTLP route handler in-process (`app.request`, no sockets),
 * with `BENCH_CONCURRENCY` requests in flight, as that many exporters would keep. Decode-only
 * runs the same bodies through protobufjs's decoder alone, in a loop (the goal's baseline);
 * scan-only through the validating scan full ingest reads protobuf bodies with
 * (wire/scan-traces.ts), for reference. The phases take turns in `BENCH_ROUNDS` short windows
 * (decode-only, scan-only, full ingest, decode-only, …), so that the host's drift falls on all
 * alike. After the full-ingest windows the bench checks that every span was
 * stored and every exception counted in a problem.
 *
 * Env: BENCH_SECONDS (measured time per phase, default 10), BENCH_WARMUP_SECONDS (2, before
 * each phase's first window; later windows warm up for 0.5 s), BENCH_ROUNDS (5; 1 = one window
 * per phase, decode-only first),
 * BENCH_CONCURRENCY (8), BENCH_SPANS_PER_REQUEST (512), BENCH_ERROR_EVERY (50: one span in 50 has
 * an exception), BENCH_TARGETS (pglite,postgres), BENCH_PG_URL (admin URL, default
 * postgres://postgres@127.0.0.1:5432/postgres), BENCH_FULL_ONLY=1 (skip decode-only and scan-only),
 * BENCH_CPU_PROF_DIR (write a V8 CPU profile of each full-ingest window there),
 * BENCH_CONVERSION_THREADS (conversion worker threads; default as in production, 0 = inline).
 *
 * Exit code: 0 when the run worked (whether or not the goals are met), 1 on any failed request,
 * lost span or error.
 */

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Hono } from "hono";
import postgres from "postgres";
import { loadConfig } from "../src/config.ts";
import type { Deps } from "../src/deps.ts";
import { bootstrapOrganization } from "../src/features/organizations/bootstrap-organization.ts";
import { decodeExport, scanTraceExport } from "../src/features/telemetry/decode-export.ts";
import { telemetrySettings } from "../src/features/telemetry/settings.ts";
import { createTelemetryRuntime } from "../src/features/telemetry/telemetry-runtime.ts";
import { type DatabaseHandle, openDatabase } from "../src/platform/db/client.ts";
import { migrateDatabase } from "../src/platform/db/migrate.ts";
import { createLogger } from "../src/platform/logging/logger.ts";
import type { AppEnv } from "../src/transports/http/env.ts";
import { requestId } from "../src/transports/http/request-id.ts";
import { createOtlpRouter } from "../src/transports/otlp/otlp.ts";
import { tuneV8ForServing } from "../src/v8-tuning.ts";
import { countStored, createPublishableKeyRow } from "./lib/ingest-setup.ts";
import { combine, measure, type Phase, REWARM_SECONDS } from "./lib/ingest-windows.ts";
import { traceBatch } from "./lib/otlp-batches.ts";

type Target = Phase["target"];

const settings = {
  seconds: positive("BENCH_SECONDS", 10),
  warmupSeconds: positive("BENCH_WARMUP_SECONDS", 2),
  rounds: Math.max(1, Math.round(positive("BENCH_ROUNDS", 5))),
  concurrency: Math.round(positive("BENCH_CONCURRENCY", 8)),
  spansPerRequest: Math.round(positive("BENCH_SPANS_PER_REQUEST", 512) / 8) * 8,
  errorEvery: Math.round(positive("BENCH_ERROR_EVERY", 50)),
  targets: (process.env.BENCH_TARGETS || "pglite,postgres").split(",").map((t) => t.trim()) as Target[],
  /** Profiling aids: skip the decode-only and scan-only phases; write a CPU profile of each full-ingest window. */
  fullOnly: process.env.BENCH_FULL_ONLY === "1",
  cpuProfDir: process.env.BENCH_CPU_PROF_DIR ? resolve(process.env.BENCH_CPU_PROF_DIR) : undefined,
  pgUrl: process.env.BENCH_PG_URL || "postgres://postgres@127.0.0.1:5432/postgres",
  /** Conversion worker threads (0: decode and encode on the serving thread); default as in production. */
  conversionThreads: process.env.BENCH_CONVERSION_THREADS
    ? Math.round(Number(process.env.BENCH_CONVERSION_THREADS))
    : undefined,
};

const t0 = performance.now();
const log = (message: string) =>
  process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${message}\n`);

const cleanups: (() => Promise<void>)[] = [];

async function main(): Promise<number> {
  const child = process.env.BENCH_CHILD_TARGET as Target | undefined;
  // Each engine's process runs as `patchbay serve` does, V8 settings included.
  if (child) {
    tuneV8ForServing(child);
    return runChild(child);
  }
  console.log(
    `patchbay bench:ingest — ${availableParallelism()} × ${cpus()[0]?.model ?? "unknown CPU"}, node ${process.version}\n` +
      `${settings.spansPerRequest} spans per request (1 in ${settings.errorEvery} with an exception), ` +
      `${settings.concurrency} requests in flight, ${settings.warmupSeconds} s warm-up + ${settings.seconds} s measured per phase` +
      `${settings.rounds > 1 ? `, in ${settings.rounds} alternating windows` : ""}\n`,
  );
  const results: Phase[] = [];
  let failures = 0;
  // Each engine in a fresh process: no JIT state, heap or PGlite memory carried from one to the next.
  for (const target of settings.targets) {
    const outcome = await spawnTarget(target);
    results.push(...outcome.results);
    failures += outcome.failures;
  }
  report(results);
  return failures > 0 ? 1 : 0;
}

async function runChild(target: Target): Promise<number> {
  const batch = traceBatch({ spans: settings.spansPerRequest, errorEvery: settings.errorEvery });
  log(`request body: ${(batch.bytes / 1024).toFixed(0)} KiB protobuf`);
  const database = await openTarget(target);
  try {
    const outcome = await runTarget(target, database, batch);
    process.stdout.write(`${JSON.stringify(outcome)}\n`);
    return outcome.failures > 0 ? 1 : 0;
  } finally {
    await database.close();
  }
}

function spawnTarget(target: Target): Promise<{ results: Phase[]; failures: number }> {
  return new Promise((resolvePromise, reject) => {
    // --expose-gc: each window starts from a collected heap (ingest-windows.ts `measure`).
    const args = [...process.execArgv, "--expose-gc", fileURLToPath(import.meta.url)];
    const proc = spawn(process.execPath, args, {
      env: { ...process.env, BENCH_CHILD_TARGET: target },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    proc.stdout.on("data", (chunk) => {
      output += String(chunk);
    });
    proc.once("error", reject);
    proc.once("exit", (code) => {
      const line = output.trim().split("\n").at(-1) ?? "";
      try {
        const outcome = JSON.parse(line) as { results: Phase[]; failures: number };
        resolvePromise({ results: outcome.results, failures: outcome.failures + (code === 0 ? 0 : 1) });
      } catch {
        reject(new Error(`the ${target} run failed (exit code ${code}):\n${output}`));
      }
    });
  });
}

async function openTarget(target: Target): Promise<{ handle: DatabaseHandle; close(): Promise<void> }> {
  if (target === "pglite") {
    const dir = mkdtempSync(join(tmpdir(), "patchbay-bench-ingest-"));
    log(`PGlite: fresh data directory ${dir}`);
    const handle = await openDatabase({ kind: "pglite", dataDir: dir });
    await migrateDatabase(handle);
    return {
      handle,
      close: async () => {
        await handle.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const name = `patchbay_bench_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = postgres(settings.pgUrl, { max: 1, onnotice: () => {} });
  log(`PostgreSQL: creating database ${name}`);
  await admin.unsafe(`create database "${name}"`);
  const drop = async () => {
    await admin.unsafe(`drop database if exists "${name}" with (force)`).catch((error: unknown) => {
      log(`could not drop database ${name}: ${String(error)}`);
    });
    await admin.end({ timeout: 5 });
  };
  cleanups.push(drop);
  const url = new URL(settings.pgUrl);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ kind: "postgres", url: url.toString() });
  await migrateDatabase(handle);
  return {
    handle,
    close: async () => {
      await handle.close();
      cleanups.splice(cleanups.indexOf(drop), 1);
      await drop();
    },
  };
}

async function runTarget(
  target: Target,
  database: { handle: DatabaseHandle },
  batch: ReturnType<typeof traceBatch>,
): Promise<{ results: Phase[]; failures: number }> {
  const { handle } = database;
  const tenant = await bootstrapOrganization({ db: handle.db, input: {} });
  const key = await createPublishableKeyRow(handle.db, tenant);
  const deps = {
    config: loadConfig({ NODE_ENV: "development", PATCHBAY_DATA_DIR: "/nonexistent" }),
    db: handle.db,
    database: handle,
    logger: createLogger({ level: "warn" }),
    clock: () => new Date(),
  } as unknown as Deps;
  // No retention timer: it would only add noise to a 10-second window.
  const defaults = telemetrySettings(deps.config);
  const runtime = createTelemetryRuntime({
    database: handle,
    logger: deps.logger,
    clock: deps.clock,
    settings: {
      ...defaults,
      sweepEveryMs: 2 ** 31 - 1,
      conversionThreads: settings.conversionThreads ?? defaults.conversionThreads,
    },
  });
  log(`${target}: ${settings.conversionThreads ?? defaults.conversionThreads} conversion thread(s)`);
  const app = new Hono<AppEnv>();
  app.use("*", async (c, next) => {
    c.set("deps", deps);
    await next();
  });
  app.use("*", requestId());
  app.route("/v1", createOtlpRouter(runtime));
  const label = target === "pglite" ? "PGlite" : "PostgreSQL";

  /** One body at a time through `read` alone, on the serving thread. */
  const readOnly =
    (read: (body: Uint8Array) => unknown) => async (deadline: number, count: (spans: number) => void) => {
      while (performance.now() < deadline) {
        read(batch.fresh());
        count(batch.spans);
        // Yield now and then so the memory sampler and timers run.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    };
  // The goal's baseline: protobufjs decoding the whole message.
  const decodeOnly = readOnly((body) => decodeExport("traces", "protobuf", body));
  // What full ingest reads a protobuf body with (wire/scan-traces.ts): shown for reference.
  const scanOnly = readOnly(scanTraceExport);

  let failures = 0;
  let exceptionsSent = 0;
  let spansSent = 0;
  const exceptionsPerRequest = countExceptions(batch.spans, settings.errorEvery);
  const fullIngest = async (deadline: number, count: (spans: number) => void) => {
    await Promise.all(
      Array.from({ length: settings.concurrency }, async () => {
        while (performance.now() < deadline) {
          const res = await app.request("/v1/traces", {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/x-protobuf" },
            body: batch.fresh(),
          });
          const body = new Uint8Array(await res.arrayBuffer());
          // 200 with an empty body: everything accepted (a partial success would have a body).
          if (res.status !== 200 || body.byteLength !== 0) {
            failures++;
            if (failures <= 3) log(`request failed: ${res.status} ${Buffer.from(body).toString("utf8")}`);
            continue;
          }
          spansSent += batch.spans;
          exceptionsSent += exceptionsPerRequest;
          count(batch.spans);
        }
      }),
    );
  };

  // The phases take turns in short windows, so that all see the same moments of this host,
  // whose speed moves by tens of percent within seconds; a phase's figure sums its windows. The
  // first window of each warms up in full (JIT, pools); later ones only refill the pipeline.
  const decodeWindows: Phase[] = [];
  const scanWindows: Phase[] = [];
  const fullWindows: Phase[] = [];
  const windowSeconds = settings.seconds / settings.rounds;
  for (let round = 0; round < settings.rounds; round++) {
    const warmup = round === 0 ? settings.warmupSeconds : REWARM_SECONDS;
    const of = settings.rounds > 1 ? ` (window ${round + 1} of ${settings.rounds})` : "";
    if (!settings.fullOnly) {
      log(`${label}: decode-only${of}`);
      decodeWindows.push(await measure(target, "decode-only", warmup, windowSeconds, decodeOnly));
      log(`${label}: scan-only${of}`);
      scanWindows.push(await measure(target, "scan-only", warmup, windowSeconds, scanOnly));
    }
    log(`${label}: full ingest${of}`);
    const profiler = settings.cpuProfDir ? new Session() : undefined;
    if (profiler) {
      profiler.connect();
      await profiler.post("Profiler.enable");
      await profiler.post("Profiler.start");
    }
    fullWindows.push(await measure(target, "full ingest", warmup, windowSeconds, fullIngest));
    if (profiler && settings.cpuProfDir) {
      const { profile } = await profiler.post("Profiler.stop");
      const file = join(settings.cpuProfDir, `ingest-${target}-${Date.now()}.cpuprofile`);
      mkdirSync(settings.cpuProfDir, { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
      profiler.disconnect();
      log(`CPU profile of the full-ingest window: ${file}`);
    }
  }
  const results = [
    ...(settings.fullOnly ? [] : [combine(decodeWindows), combine(scanWindows)]),
    combine(fullWindows),
  ];
  await runtime.close();

  const stored = await countStored(handle.db, tenant.environmentId);
  const ok = stored.spans === spansSent && stored.problemOccurrences === exceptionsSent;
  log(
    `${label}: stored ${stored.spans} of ${spansSent} spans; ${stored.problems} problems counting ` +
      `${stored.problemOccurrences} of ${exceptionsSent} exceptions — ${ok ? "complete" : "MISMATCH"}`,
  );
  if (!ok) failures++;
  return { results, failures };
}

/** Spans with an exception event in one request (see otlp-batches.ts: index % errorEvery === 7). */
function countExceptions(spans: number, errorEvery: number): number {
  let n = 0;
  for (let i = 0; i < spans; i++) if (i % errorEvery === 7) n++;
  return n;
}

function report(results: Phase[]) {
  const fmt = (n: number | null, digits = 0) => (n === null ? "—" : n.toFixed(digits));
  const header = [
    "engine",
    "phase",
    "spans/s",
    "vs decode",
    "peak RSS MiB",
    "peak heap MiB",
    "CPU bench",
    "main",
    "db",
    "other",
  ];
  const rows = results.map((r) => {
    const decode = results.find((d) => d.target === r.target && d.phase === "decode-only");
    return [
      r.target === "pglite" ? "PGlite" : "PostgreSQL",
      r.phase,
      fmt(r.spansPerSecond),
      decode ? `${((r.spansPerSecond / decode.spansPerSecond) * 100).toFixed(1)} %` : "—",
      fmt(r.peakRssMiB),
      fmt(r.peakHeapMiB),
      r.cpu.bench === null ? "—" : `${fmt(r.cpu.bench)} %`,
      r.cpu.main === null ? "—" : `${fmt(r.cpu.main)} %`,
      r.cpu.db === null ? "—" : `${fmt(r.cpu.db)} %`,
      r.cpu.other === null ? "—" : `${fmt(r.cpu.other)} %`,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of rows) console.log(line(row));
  console.log("");
  const pgFull = results.find((r) => r.target === "postgres" && r.phase === "full ingest");
  const pgDecode = results.find((r) => r.target === "postgres" && r.phase === "decode-only");
  if (pgFull && pgDecode) {
    const share = pgFull.spansPerSecond / pgDecode.spansPerSecond;
    console.log(
      `Goal 1 (PostgreSQL full ingest ≥ 50,000 spans/s): ${pgFull.spansPerSecond >= 50_000 ? "MET" : "NOT MET"} — ${fmt(pgFull.spansPerSecond)} spans/s`,
    );
    console.log(
      `Goal 2 (full ingest ≥ 25 % of decode-only, same run): ${share >= 0.25 ? "MET" : "NOT MET"} — ${(share * 100).toFixed(1)} %`,
    );
    const pgScan = results.find((r) => r.target === "postgres" && r.phase === "scan-only");
    if (pgScan) {
      console.log(
        `For reference: full ingest is ${((pgFull.spansPerSecond / pgScan.spansPerSecond) * 100).toFixed(1)} % of scan-only, the validating scan it reads protobuf bodies with.`,
      );
    }
    if ((pgFull.cpu.other ?? 0) > 25) {
      console.log(`Warning: other processes used ${fmt(pgFull.cpu.other)} % of a core during the window.`);
    }
  }
}

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
}

const interrupted = () => {
  void Promise.all(cleanups.map((c) => c())).finally(() => process.exit(130));
};
process.on("SIGINT", interrupted);
process.on("SIGTERM", interrupted);

main()
  .then(async (code) => {
    await Promise.all(cleanups.map((c) => c()));
    process.exit(code);
  })
  .catch(async (error: unknown) => {
    console.error(error);
    await Promise.all(cleanups.map((c) => c()));
    process.exit(1);
  });
