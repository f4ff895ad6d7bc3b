/**
 * `npm run bench:discovery`: how long discovering 1,000 tools takes through patchbay's
 * `listRemoteTools` (protected egress, bounds, assessment, hashing) next to the bare MCP SDK
 * (`Client.listTools` page by page, the SDK's default fetch, no egress) against the same
 * loopback HTTPS MCP server (1,000 small realistic tools, 100 per page). See docs/performance.md.
 *
 * Every role runs in its own process: the server, and each measured side. So the server never
 * shares an event loop with a client, and each side's peak RSS (`resourceUsage().maxRSS`) is its
 * own, not inflated by the other side's garbage. Sides run in rounds of alternating order
 * (bare→patchbay, patchbay→bare, …) and their samples are pooled, so a warming machine does not
 * favour one side. Each listing is a fresh client session (initialize + every page + close),
 * as a discovery is; both sides keep their HTTP connection pool across iterations.
 *
 * Env: BENCH_TOOLS (1000), BENCH_PAGE_SIZE (100), BENCH_ITERATIONS (20 per round and side),
 * BENCH_WARMUP (5), BENCH_ROUNDS (4).
 *
 * Exit code: 0 when the run worked (whether or not the goal is met), 1 on any error.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { startChild as startChildRole } from "./lib/child-role.ts";

/** Goal: patchbay's discovery takes at most this multiple of the bare listing's time. */
const GOAL_RATIO = 1.5;

const settings = {
  tools: positiveInt("BENCH_TOOLS", 1_000),
  pageSize: positiveInt("BENCH_PAGE_SIZE", 100),
  iterations: positiveInt("BENCH_ITERATIONS", 20),
  warmup: positiveInt("BENCH_WARMUP", 5),
  rounds: positiveInt("BENCH_ROUNDS", 4),
};

type Side = "bare" | "patchbay";
type ServerInfo = { url: string; port: number; caFile: string };
type SideResult = {
  side: Side;
  timesMs: number[];
  toolCount: number;
  /** Peak resident set of the whole process (resourceUsage().maxRSS), MiB. */
  peakRssMiB: number;
  /** RSS after imports and warm-up, before the measured listings, MiB. */
  baseRssMiB: number;
  /** Highest heapUsed sampled every 20 ms and after each listing during the measured listings, MiB. */
  peakHeapMiB: number;
  /** Client process CPU (user + system) per measured listing, ms: robust to a busy machine. */
  cpuMs: number;
};

const MiB = 1024 * 1024;
const started = performance.now();
const self = fileURLToPath(import.meta.url);
const [role, arg] = process.argv.slice(2);

if (role === "server") await serve();
else if (role === "client") await measure(arg === "patchbay" ? "patchbay" : "bare");
else process.exitCode = await main();

// ---------------------------------------------------------------- orchestration

async function main(): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), "patchbay-bench-discovery-"));
  let server: Awaited<ReturnType<typeof startChild>> | undefined;
  try {
    console.log(
      `patchbay bench:discovery — ${availableParallelism()} × ${cpus()[0]?.model ?? "unknown CPU"}, node ${process.version}\n` +
        `${settings.tools} tools, ${settings.pageSize} per page; ${settings.rounds} rounds × ${settings.iterations} listings per side after ${settings.warmup} warm-up\n`,
    );
    server = await startChild(["server", work], "READY");
    const info = JSON.parse(server.firstLine) as ServerInfo;
    const results: SideResult[] = [];
    for (let round = 0; round < settings.rounds; round++) {
      const order: Side[] = round % 2 === 0 ? ["bare", "patchbay"] : ["patchbay", "bare"];
      for (const side of order) {
        log(`round ${round + 1}: ${side}`);
        const child = await startChild(["client", side], "RESULT", {
          BENCH_SERVER: JSON.stringify(info),
          // The bare side uses the SDK's default fetch, which trusts the test CA only this way.
          ...(side === "bare" ? { NODE_EXTRA_CA_CERTS: info.caFile } : {}),
        });
        results.push(JSON.parse(child.firstLine) as SideResult);
        await child.exited;
      }
    }
    report(pool(results, "bare"), pool(results, "patchbay"));
    return 0;
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    return 1;
  } finally {
    server?.kill();
    rmSync(work, { recursive: true, force: true });
  }
}

function pool(results: SideResult[], side: Side): SideResult {
  const mine = results.filter((result) => result.side === side);
  return {
    side,
    timesMs: mine.flatMap((result) => result.timesMs),
    toolCount: Math.min(...mine.map((result) => result.toolCount)),
    peakRssMiB: Math.max(...mine.map((result) => result.peakRssMiB)),
    baseRssMiB: Math.max(...mine.map((result) => result.baseRssMiB)),
    peakHeapMiB: Math.max(...mine.map((result) => result.peakHeapMiB)),
    cpuMs: mine.reduce((sum, result) => sum + result.cpuMs, 0) / mine.length,
  };
}

function report(bare: SideResult, patchbay: SideResult): void {
  const row = (label: string, r: SideResult) =>
    `| ${label} | ${r.toolCount} | ${r.timesMs.length} | ${fmt(percentile(r.timesMs, 50))} | ${fmt(percentile(r.timesMs, 95))} | ${fmt(r.cpuMs)} | ${fmt(r.baseRssMiB, 0)} | ${fmt(r.peakRssMiB, 0)} | ${fmt(r.peakHeapMiB, 0)} |`;
  const ratio = percentile(patchbay.timesMs, 50) / percentile(bare.timesMs, 50);
  const ratio95 = percentile(patchbay.timesMs, 95) / percentile(bare.timesMs, 95);
  const cpuRatio = patchbay.cpuMs / bare.cpuMs;
  console.log(
    [
      "| side | tools | listings | median ms | p95 ms | client CPU ms/listing | base RSS MiB | peak RSS MiB | peak heap MiB |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
      row("bare SDK `Client.listTools` loop (no egress)", bare),
      row("patchbay `listRemoteTools` (egress, bounds, hashing)", patchbay),
      "",
      `patchbay / bare: median ${fmt(ratio, 2)}×, p95 ${fmt(ratio95, 2)}×, client CPU ${fmt(cpuRatio, 2)}× — goal ≤ ${GOAL_RATIO}× of the bare listing's time: ${
        ratio <= GOAL_RATIO ? "met" : "NOT met"
      }`,
    ].join("\n"),
  );
}

function startChild(args: string[], marker: string, env: Record<string, string> = {}) {
  return startChildRole(self, args, marker, env);
}

// ---------------------------------------------------------------- roles

async function serve(): Promise<void> {
  const { manyTools, startMcpServer } = await import("../test/lib/mcp-servers.ts");
  const server = await startMcpServer({ tools: manyTools(settings.tools), pageSize: settings.pageSize });
  const caFile = join(process.argv[3] ?? tmpdir(), "ca.pem");
  writeFileSync(caFile, server.ca.cert);
  const info: ServerInfo = { url: server.url, port: server.port, caFile };
  console.log(`READY ${JSON.stringify(info)}`);
  process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
}

async function measure(side: Side): Promise<void> {
  const info = JSON.parse(process.env.BENCH_SERVER ?? "{}") as ServerInfo;
  const listOnce = side === "bare" ? await bareLister(info) : await patchbayLister(info);
  let toolCount = 0;
  for (let i = 0; i < settings.warmup; i++) toolCount = await listOnce();
  const baseRss = process.memoryUsage().rss;
  let peakHeap = 0;
  const sampler = setInterval(() => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  }, 20);
  const timesMs: number[] = [];
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < settings.iterations; i++) {
    const started = performance.now();
    toolCount = await listOnce();
    timesMs.push(performance.now() - started);
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  }
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(sampler);
  const result: SideResult = {
    side,
    timesMs,
    toolCount,
    peakRssMiB: (process.resourceUsage().maxRSS * 1024) / MiB,
    baseRssMiB: baseRss / MiB,
    peakHeapMiB: peakHeap / MiB,
    cpuMs: (cpu.user + cpu.system) / 1000 / settings.iterations,
  };
  console.log(`RESULT ${JSON.stringify(result)}`);
  process.exit(0);
}

/** The SDK as documented: a client, its Streamable HTTP transport, listTools until no cursor. */
async function bareLister(info: ServerInfo): Promise<() => Promise<number>> {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import(
    "@modelcontextprotocol/sdk/client/streamableHttp.js"
  );
  return async () => {
    const client = new Client({ name: "bench", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(info.url)));
    let count = 0;
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor });
      count += page.tools.length;
      cursor = page.nextCursor;
    } while (cursor);
    await client.close();
    return count;
  };
}

/** patchbay's discovery path, with the egress dev override exactly as PATCHBAY_EGRESS_* set it. */
async function patchbayLister(info: ServerInfo): Promise<() => Promise<number>> {
  const { egressPolicyFromEnv } = await import("../src/platform/egress/address-policy.ts");
  const { createEgress } = await import("../src/platform/egress/egress-fetch.ts");
  const { listRemoteTools } = await import("../src/platform/mcp-client/remote-client.ts");
  const policy = egressPolicyFromEnv(
    {
      PATCHBAY_EGRESS_ALLOW_CIDRS: "127.0.0.1/32",
      PATCHBAY_EGRESS_ALLOW_PORTS: String(info.port),
      PATCHBAY_EGRESS_CA_FILE: info.caFile,
    },
    "development",
  );
  const egress = createEgress(policy);
  return async () => {
    const listing = await listRemoteTools({ egress, endpointUrl: info.url, auth: { kind: "none" } });
    if (!listing.tools.every((tool) => tool.approvable)) throw new Error("unexpected non-approvable tool");
    return listing.tools.length;
  };
}

// ---------------------------------------------------------------- helpers

function log(message: string) {
  const s = ((performance.now() - started) / 1000).toFixed(1).padStart(5);
  process.stderr.write(`[${s}s] ${message}\n`);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

function fmt(value: number, digits = 1): string {
  return value.toFixed(digits);
}

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}
