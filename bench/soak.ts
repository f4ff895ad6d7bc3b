/**
 * `npm run bench:soak`: does memory level off under steady load? Two `patchbay serve` instances
 * on one PostgreSQL database get a steady, bounded mix of REST reads and OTLP trace exports for
 * 10 minutes; every 30 s the bench prints each instance's RSS and V8 heap with the requests of
 * that interval, and at the end whether memory plateaus or climbs (bench/lib/soak-verdict.ts).
 * See docs/performance.md.
 *
 * Memory is read from outside the product: RSS from /proc/<pid>/status, the heap from a module
 * preloaded into each instance (bench/lib/report-memory.ts) that reports over an IPC channel.
 *
 * Usage: `npm run bench:soak [-- --minutes N]`.
 * Env: BENCH_MINUTES (10; --minutes wins), BENCH_REPORT_SECONDS (30), BENCH_REST_CLIENTS (4),
 * BENCH_REST_RATE (requests/s per REST client, 15), BENCH_EXPORTERS (2), BENCH_EXPORT_RATE
 * (posts/s per exporter, 1), BENCH_SPANS_PER_EXPORT (512), BENCH_LOG_LEVEL (patchbay's
 * LOG_LEVEL, warn), BENCH_PG_URL (admin URL, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_SAMPLES_CSV (write every memory sample there).
 *
 * Exit code: 0 when memory plateaus, 1 when it climbs or the run failed (an instance died, setup
 * failed, or more than 1 % of requests failed: then the load was not what the figures claim).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { request } from "undici";
import { generateKek } from "../src/platform/vault/keyring.ts";
import { bootstrapTenant, type Tenant } from "./lib/bootstrap.ts";
import { traceBatch } from "./lib/otlp-batches.ts";
import { type Child, freePort, processRssBytes, startNode, tail, waitForHttp } from "./lib/processes.ts";
import type { MemoryReport } from "./lib/report-memory.ts";
import { runBench } from "./lib/run-bench.ts";
import { createScratchDatabase } from "./lib/scratch-database.ts";
import { restPaths, type SoakLoad, startSoakLoad } from "./lib/soak-load.ts";
import {
  HEADER,
  type InstanceMemory,
  printInterval,
  reportLoad,
  reportMemory,
  snapshot,
  tableRow,
} from "./lib/soak-report.ts";

const root = resolve(import.meta.dirname, "..");
const patchbayBin = join(root, "bin", "patchbay.js");
const preload = pathToFileURL(join(root, "bench", "lib", "report-memory.ts")).href;

const { values: flags } = parseArgs({ options: { minutes: { type: "string" } } });
const settings = {
  minutes: positive("--minutes", flags.minutes ?? process.env.BENCH_MINUTES, 10),
  reportSeconds: positive("BENCH_REPORT_SECONDS", process.env.BENCH_REPORT_SECONDS, 30),
  restClients: Math.round(positive("BENCH_REST_CLIENTS", process.env.BENCH_REST_CLIENTS, 4)),
  restRate: positive("BENCH_REST_RATE", process.env.BENCH_REST_RATE, 15),
  exporters: Math.round(positive("BENCH_EXPORTERS", process.env.BENCH_EXPORTERS, 2)),
  exportRate: positive("BENCH_EXPORT_RATE", process.env.BENCH_EXPORT_RATE, 1),
  spansPerExport:
    Math.round(positive("BENCH_SPANS_PER_EXPORT", process.env.BENCH_SPANS_PER_EXPORT, 512) / 8) * 8,
  logLevel: process.env.BENCH_LOG_LEVEL || "warn",
  pgUrl: process.env.BENCH_PG_URL || "postgres://postgres@127.0.0.1:5432/postgres",
  samplesCsv: process.env.BENCH_SAMPLES_CSV ? resolve(process.env.BENCH_SAMPLES_CSV) : undefined,
};

/** RSS is read this often; the heap arrives as often as report-memory.ts sends it (1 s). */
const SAMPLE_EVERY_MS = 1_000;

type Instance = InstanceMemory & { child: Child; base: string };

const interrupt = new AbortController();
const children = new Set<Child>();
const cleanups: Array<() => Promise<void>> = [];
const t0 = performance.now();
/** While the soak runs: when it started (performance.now()), which memory samples are timed from. */
let recordingFrom: number | undefined;
function log(message: string) {
  process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${message}\n`);
}

async function main(): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), "patchbay-soak-"));
  cleanups.push(async () => rmSync(work, { recursive: true, force: true }));
  const database = await createScratchDatabase(settings.pgUrl, "patchbay_soak");
  cleanups.push(async () => {
    await database.drop().catch((error: unknown) => log(`could not drop ${database.name}: ${String(error)}`));
  });
  log(`PostgreSQL: created database ${database.name}`);

  // One KEK for both: they share the database, so each must unwrap what the other wrapped.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "development",
    LOG_LEVEL: settings.logLevel,
    DATABASE_URL: database.url,
    PATCHBAY_KEK: generateKek(),
    PATCHBAY_DEV_CHAIN: "off",
  };
  delete env.PATCHBAY_BASE_URL;
  log("bootstrapping (migrations + organisation + API key)");
  const tenant = await bootstrapTenant(patchbayBin, { ...env, PATCHBAY_DATA_DIR: join(work, "bootstrap") });
  const instances = await Promise.all(["A", "B"].map((name) => startInstance(name, env, work)));
  const publishableKey = await createPublishableKey(instances[0]?.base ?? "", tenant);
  await preflight(instances, tenant, publishableKey);

  console.log(
    `patchbay bench:soak — ${availableParallelism()} × ${cpus()[0]?.model ?? "unknown CPU"}, node ${process.version}\n` +
      `2 instances on PostgreSQL, ${settings.minutes} min; REST: ${settings.restClients} clients × ${settings.restRate}/s ` +
      `(/me, environment, mcp-connections, problems); OTLP: ${settings.exporters} exporters × ${settings.exportRate}/s ` +
      `× ${settings.spansPerExport} spans; every client alternates between the instances\n`,
  );
  const stopLoad = new AbortController();
  interrupt.signal.addEventListener("abort", () => stopLoad.abort(), { once: true });
  const load = startSoakLoad({
    bases: instances.map((i) => i.base),
    environmentId: tenant.environmentId,
    apiKey: tenant.apiKey,
    publishableKey,
    restClients: settings.restClients,
    restRate: settings.restRate,
    exporters: settings.exporters,
    exportRate: settings.exportRate,
    spansPerExport: settings.spansPerExport,
    signal: stopLoad.signal,
  });
  const seconds = await soak(instances, load);
  stopLoad.abort();
  await load.done;
  if (settings.samplesCsv) writeSamples(settings.samplesCsv, instances);
  const memoryOk = reportMemory(instances, seconds);
  const loadOk = reportLoad(load);
  return memoryOk && loadOk ? 0 : 1;
}

async function startInstance(name: string, env: NodeJS.ProcessEnv, work: string): Promise<Instance> {
  const port = await freePort();
  const instanceEnv = { ...env, PORT: String(port), HOST: "127.0.0.1", PATCHBAY_DATA_DIR: join(work, name) };
  const memory: Omit<InstanceMemory, "name" | "pid"> = {
    rss: [],
    heapUsed: [],
    heapTotal: [],
    heap: {},
  };
  const onMessage = (message: unknown) => {
    if (!isMemoryReport(message)) return;
    memory.heap.latest = message;
    if (recordingFrom === undefined) return;
    const t = (performance.now() - recordingFrom) / 1000;
    memory.heapUsed.push({ t, value: message.heapUsed });
    memory.heapTotal.push({ t, value: message.heapTotal });
  };
  const args = [`--import=${preload}`, patchbayBin, "serve"];
  const child = startNode(`instance ${name}`, args, instanceEnv, join(work, `${name}.log`), onMessage);
  children.add(child);
  const base = `http://127.0.0.1:${port}`;
  log(`instance ${name}: pid ${child.pid}, port ${port}`);
  await waitForHttp(`${base}/readyz`, child);
  return { name, pid: child.pid, child, base, ...memory };
}

function isMemoryReport(message: unknown): message is MemoryReport {
  return (
    typeof message === "object" &&
    message !== null &&
    "kind" in message &&
    message.kind === "memory" &&
    "heapUsed" in message &&
    typeof message.heapUsed === "number" &&
    "heapTotal" in message &&
    typeof message.heapTotal === "number"
  );
}

async function createPublishableKey(base: string, tenant: Tenant): Promise<string> {
  const res = await request(`${base}/api/v1/environments/${tenant.environmentId}/publishable-keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${tenant.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench soak" }),
  });
  const text = await res.body.text();
  const parsed: unknown = res.statusCode === 201 ? JSON.parse(text) : undefined;
  if (typeof parsed === "object" && parsed !== null && "key" in parsed && typeof parsed.key === "string") {
    return parsed.key;
  }
  throw new Error(`creating a publishable key answered ${res.statusCode}: ${text}`);
}

/** One of each request against each instance: a setup mistake fails here, not as 10 minutes of 4xx. */
async function preflight(instances: Instance[], tenant: Tenant, publishableKey: string) {
  const batch = traceBatch({ spans: 8 });
  for (const instance of instances) {
    for (const path of restPaths(tenant.environmentId)) {
      const res = await request(`${instance.base}${path}`, {
        headers: { authorization: `Bearer ${tenant.apiKey}` },
      });
      const text = await res.body.text();
      if (res.statusCode !== 200)
        throw new Error(`GET ${path} on ${instance.name}: ${res.statusCode} ${text}`);
    }
    const res = await request(`${instance.base}/v1/traces`, {
      method: "POST",
      headers: { authorization: `Bearer ${publishableKey}`, "content-type": "application/x-protobuf" },
      body: batch.fresh(),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200)
      throw new Error(`POST /v1/traces on ${instance.name}: ${res.statusCode} ${text}`);
  }
}

/** Runs the soak until its end (or an instance dies, or Ctrl-C), printing a row per instance per interval. */
async function soak(instances: Instance[], load: SoakLoad): Promise<number> {
  const start = performance.now();
  recordingFrom = start;
  const end = start + settings.minutes * 60_000;
  const died = new AbortController();
  const sampleRss = () => {
    const t = (performance.now() - start) / 1000;
    for (const instance of instances) {
      if (instance.child.exited()) died.abort();
      const rss = processRssBytes(instance.child.pid);
      if (rss !== null) instance.rss.push({ t, value: rss });
    }
  };
  sampleRss();
  const sampler = setInterval(sampleRss, SAMPLE_EVERY_MS);
  const signal = AbortSignal.any([interrupt.signal, died.signal]);
  console.log(tableRow(HEADER));
  let previous = snapshot(instances, load);
  try {
    for (let next = start + settings.reportSeconds * 1000; ; next += settings.reportSeconds * 1000) {
      const until = Math.min(next, end);
      await sleep(Math.max(0, until - performance.now()), undefined, { signal }).catch(() => {});
      const dead = instances.find((i) => i.child.exited());
      if (dead) throw new Error(`${dead.child.name} exited during the soak:\n${tail(dead.child.logFile)}`);
      interrupt.signal.throwIfAborted();
      sampleRss();
      const current = snapshot(instances, load);
      printInterval(instances, start, previous, current);
      previous = current;
      if (until >= end) break;
    }
  } finally {
    clearInterval(sampler);
    recordingFrom = undefined;
  }
  return (end - start) / 1000;
}

function writeSamples(file: string, instances: Instance[]) {
  const lines = ["instance,series,t_seconds,bytes"];
  for (const instance of instances) {
    for (const [series, points] of [
      ["rss", instance.rss],
      ["heap_used", instance.heapUsed],
      ["heap_total", instance.heapTotal],
    ] as const) {
      for (const p of points) lines.push(`${instance.name},${series},${p.t.toFixed(2)},${p.value}`);
    }
  }
  writeFileSync(file, `${lines.join("\n")}\n`);
  log(`memory samples written to ${file}`);
}

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got ${raw}`);
  return value;
}

let stopping: Promise<void> | undefined;

/** Stops every instance and runs the clean-ups once; later callers wait for the same run. */
function shutdown(): Promise<void> {
  stopping ??= (async () => {
    await Promise.all([...children].map((c) => c.stop(15_000)));
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  })();
  return stopping;
}

await runBench({ name: "bench:soak", main, shutdown, interrupt, log, startedAt: t0 });
