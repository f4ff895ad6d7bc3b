/**
 * `npm run bench:api`: every `GET` of the REST surface (docs/openapi.json), the common writes and
 * `/mcp` `tools/call` of the read tools, each under closed-loop load, beside a bare Hono route
 * measured in the same run — on PostgreSQL, with realistic data (bench/lib/api-seed.ts). Requests
 * vary across organisations, environments, keys and ids. See docs/performance.md, "REST API".
 *
 * Every server runs in its own child process (patchbay and the bare baseline side by side, loaded
 * one at a time); the load generator runs here. The bare route is measured at the start, in the
 * middle and at the end; each row is compared with the median of those. Beside each, floors on the
 * same bare server: a read that makes one prepared query (reads and aggregations are compared with
 * it), a write that commits one single-row INSERT (writes), and patchbay's own services statement
 * run as one prepared query (the services row; measured only when that row is).
 *
 * Env: BENCH_SECONDS (measured per route, default 3), BENCH_WARMUP_SECONDS (1), BENCH_CONNECTIONS
 * (32), BENCH_ROUTES (comma list of substrings: only rows whose label contains one), BENCH_SPANS
 * (300000), BENCH_ORGS (3), BENCH_LOG_LEVEL (warn), BENCH_PG_URL (admin URL, default
 * postgres://postgres@127.0.0.1:5432/postgres), BENCH_CPU_PROF_DIR (a V8 CPU profile of the server).
 *
 * Exit code: 0 when the run worked (goals met or not), 1 on any failed request or error.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { request } from "undici";
import { bootstrapOrganizations, type SeededEnvironment, seed } from "./lib/api-seed.ts";
import { type LoadRequest, type LoadResult, runLoad } from "./lib/load.ts";
import {
  type Child,
  freePort,
  machineCpuSeconds,
  processCpuSeconds,
  startNode,
  waitForHttp,
} from "./lib/processes.ts";
import { runBench } from "./lib/run-bench.ts";
import { createScratchDatabase } from "./lib/scratch-database.ts";

const root = resolve(import.meta.dirname, "..");
const patchbayBin = join(root, "bin", "patchbay.js");
const bareServer = join(root, "bench", "lib", "bare-server.ts");

/** The goals: share of the bare route's req/s by class, and p99 at most this × bare's. */
const GOALS = { read: 0.35, aggregation: 0.15, write: 0.15 } as const;
const P99_GOAL = 4;
type RouteClass = keyof typeof GOALS;

const settings = {
  seconds: positiveNumber("BENCH_SECONDS", 3),
  warmupSeconds: positiveNumber("BENCH_WARMUP_SECONDS", 1),
  connections: Math.round(positiveNumber("BENCH_CONNECTIONS", 32)),
  spans: Math.round(positiveNumber("BENCH_SPANS", 300_000)),
  organizations: Math.round(positiveNumber("BENCH_ORGS", 3)),
  routes: (process.env.BENCH_ROUTES ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean),
  logLevel: process.env.BENCH_LOG_LEVEL || "warn",
  pgUrl: process.env.BENCH_PG_URL || "postgres://postgres@127.0.0.1:5432/postgres",
  cpuProfDir: process.env.BENCH_CPU_PROF_DIR ? resolve(process.env.BENCH_CPU_PROF_DIR) : undefined,
};

type Row = LoadResult & {
  label: string;
  cls: RouteClass | "bare" | "floor";
  /** Server and PostgreSQL CPU per response, µs; `other` = the rest of the machine, % of a core. */
  serverUs: number | null;
  dbUs: number | null;
  otherPct: number | null;
};

/**
 * Which floor a row is set beside: the one-query read, the one-commit write, or the services
 * aggregation's own statement (a read whose single query is the aggregation).
 */
type FloorKind = "read" | "write" | "services";

type Route = {
  label: string;
  cls: RouteClass;
  request: (worker: number) => LoadRequest;
  floor?: FloorKind;
};

const children = new Set<Child>();
const interrupt = new AbortController();
const cleanups: Array<() => Promise<void>> = [];
const t0 = performance.now();

function log(message: string) {
  const s = ((performance.now() - t0) / 1000).toFixed(1).padStart(5);
  process.stderr.write(`[${s}s] ${message}\n`);
}

const pick = <T>(items: readonly T[]): T => {
  const item = items[Math.floor(Math.random() * items.length)];
  if (item === undefined) throw new Error("nothing to pick from: the seed left a list empty");
  return item;
};

async function main(): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), "patchbay-bench-"));
  cleanups.push(async () => rmSync(work, { recursive: true, force: true }));
  if (settings.cpuProfDir) mkdirSync(settings.cpuProfDir, { recursive: true });
  console.log(
    `patchbay bench:api — ${availableParallelism()} × ${cpus()[0]?.model ?? "unknown CPU"}, node ${process.version}, ` +
      `load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")} at start\n` +
      `PostgreSQL, ${settings.connections} connections, ${settings.warmupSeconds} s warm-up + ${settings.seconds} s measured per route, ` +
      `patchbay LOG_LEVEL=${settings.logLevel}\n`,
  );

  const database = await createScratchDatabase(settings.pgUrl, "patchbay_bench");
  log(`PostgreSQL: created database ${database.name}`);
  cleanups.push(async () => {
    await database
      .drop()
      .catch((error: unknown) => log(`could not drop database ${database.name}: ${String(error)}`));
  });
  const env = patchbayEnv({ PATCHBAY_DATA_DIR: join(work, "postgres"), DATABASE_URL: database.url });
  log(`bootstrapping ${settings.organizations} organisations (migrations, owner, environment, API key)`);
  const tenants = await bootstrapOrganizations(patchbayBin, env, settings.organizations, interrupt.signal);

  const port = await freePort();
  const args = settings.cpuProfDir
    ? [`--cpu-prof`, `--cpu-prof-dir=${settings.cpuProfDir}`, patchbayBin, "serve"]
    : [patchbayBin, "serve"];
  const server = track(
    startNode(
      "patchbay",
      args,
      { ...env, PORT: String(port), HOST: "127.0.0.1" },
      join(work, "patchbay.log"),
    ),
  );
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/healthz`, server);
  const environments = await seed({
    base,
    databaseUrl: database.url,
    tenants,
    sizes: {
      organizations: settings.organizations,
      environmentsPerOrganization: 2,
      keysPerOrganization: 3,
      connectionsPerEnvironment: 24,
      tasksPerEnvironment: 200,
      problemsPerEnvironment: 150,
      spans: settings.spans,
    },
    log,
  });

  // The bare baseline serves patchbay's own environment document from memory.
  const first = environments[0];
  if (!first) throw new Error("no environment seeded");
  const document = await (
    await request(`${base}/api/v1/environments/${first.environmentId}`, {
      headers: { authorization: `Bearer ${first.keys[0]}` },
    })
  ).body.text();
  const barePort = await freePort();
  const bare = track(
    startNode(
      "bare Hono",
      [bareServer],
      {
        ...process.env,
        PORT: String(barePort),
        HOST: "127.0.0.1",
        BENCH_BODY: document,
        BENCH_DATABASE_URL: database.url,
      },
      join(work, "bare.log"),
    ),
  );
  const bareBase = `http://127.0.0.1:${barePort}`;
  await waitForHttp(`${bareBase}/healthz`, bare);
  const bareRequest = (): LoadRequest => ({ path: `/api/v1/environments/${first.environmentId}` });
  const floorRequest = (): LoadRequest => ({ path: `/floor/api-keys/${pick(environments).organizationId}` });
  let floorWrites = 0;
  const writeFloorRequest = (): LoadRequest => {
    floorWrites += 1;
    return {
      path: `/floor/write/${pick(environments).organizationId}`,
      method: "POST",
      expectStatus: 201,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        alias: `f-${floorWrites}`,
        displayName: `Floor ${floorWrites}`,
        endpointUrl: `https://f${floorWrites}.example.com/mcp`,
        auth: { kind: "none" },
      }),
    };
  };

  const servicesFloorRequest = (): LoadRequest => ({
    path: `/floor/services/${pick(environments).environmentId}`,
  });

  const routes = buildRoutes(environments).filter(
    (r) => settings.routes.length === 0 || settings.routes.some((s) => r.label.includes(s)),
  );
  const bareRows: Row[] = [];
  const rows: Row[] = [];
  const floors: Record<FloorKind, Row[]> = { read: [], write: [], services: [] };
  // The services floor only where a row is set beside it (it is ~12 s of a run).
  const servicesFloor = routes.some((r) => r.floor === "services");
  const measureBare = async () => {
    bareRows.push(
      await measure("bare Hono route (in memory)", "bare", bareBase, bare.pid, null, bareRequest),
    );
    floors.read.push(
      await measure(FLOOR_LABELS.read, "floor", bareBase, bare.pid, database.name, floorRequest),
    );
    floors.write.push(
      await measure(FLOOR_LABELS.write, "floor", bareBase, bare.pid, database.name, writeFloorRequest),
    );
    if (servicesFloor) {
      floors.services.push(
        await measure(
          FLOOR_LABELS.services,
          "floor",
          bareBase,
          bare.pid,
          database.name,
          servicesFloorRequest,
        ),
      );
    }
  };
  await measureBare();
  const floorOf = new Map<string, FloorKind>();
  for (const [i, route] of routes.entries()) {
    if (i === Math.floor(routes.length / 2) && i > 0) await measureBare();
    rows.push(await measure(route.label, route.cls, base, server.pid, database.name, route.request));
    floorOf.set(route.label, route.floor ?? (route.cls === "write" ? "write" : "read"));
  }
  await measureBare();
  return report(bareRows, floors, floorOf, rows, routes);
}

/** Every measured row. Reads name a random environment, key and resource each time. */
function buildRoutes(environments: SeededEnvironment[]): Route[] {
  const auth = (e: SeededEnvironment) => ({ authorization: `Bearer ${pick(e.keys)}` });
  const get = (path: (e: SeededEnvironment) => string) => (): LoadRequest => {
    const e = pick(environments);
    return { path: `/api/v1${path(e)}`, headers: auth(e) };
  };
  const envPath = (e: SeededEnvironment) => `/environments/${e.environmentId}`;
  const read = (label: string, path: (e: SeededEnvironment) => string, cls: RouteClass = "read"): Route => ({
    label: `GET ${label}`,
    cls,
    request: get(path),
  });

  // Writes: each worker changes connections of its own, so If-Match revisions stay its own.
  const revisions = new Map<string, number>();
  const workerConnection = (worker: number, offset: number) => {
    const e = environments[worker % environments.length];
    const c = e?.connections[offset + Math.floor(worker / environments.length)];
    if (!e || !c) throw new Error("not enough seeded connections for one per worker");
    return { e, c };
  };
  const keepRevision = (id: string) => (headers: Record<string, string | string[] | undefined>) => {
    const etag = headers.etag;
    if (typeof etag === "string") revisions.set(id, Number(etag.replaceAll('"', "")));
  };
  const change = (e: SeededEnvironment, id: string) => ({
    ...auth(e),
    "content-type": "application/json",
    "idempotency-key": crypto.randomUUID(),
    "if-match": `"${revisions.get(id) ?? 1}"`,
  });
  let created = 0;
  const runTag = Date.now().toString(36);

  const mcp = (
    label: string,
    tool: string,
    args: (e: SeededEnvironment) => Record<string, unknown>,
  ): Route => ({
    label: `MCP tools/call ${label}`,
    cls: "read",
    request: () => {
      const e = pick(environments);
      return {
        path: "/mcp",
        method: "POST",
        headers: {
          ...auth(e),
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-06-18",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: tool, arguments: args(e) },
        }),
      };
    },
  });

  return [
    read("/me", () => "/me"),
    read("/environments", () => "/environments"),
    read("/environments/{id}", envPath),
    read("/api-keys", () => "/api-keys"),
    read("…/mcp-connections", (e) => `${envPath(e)}/mcp-connections`),
    read("…/mcp-connections/{id}", (e) => `${envPath(e)}/mcp-connections/${pick(e.connections).id}`),
    read("…/tasks", (e) => `${envPath(e)}/tasks`),
    read("…/tasks/{id}", (e) => `${envPath(e)}/tasks/${pick(e.tasks)}`),
    read("…/tasks/{id}/tool-calls", (e) => `${envPath(e)}/tasks/${pick(e.tasks)}/tool-calls`),
    read("…/tasks/{id}/call-approvals", (e) => `${envPath(e)}/tasks/${pick(e.tasks)}/call-approvals`),
    read("…/tasks/{id}/transcript", (e) => `${envPath(e)}/tasks/${pick(e.tasks)}/transcript`),
    read("…/publishable-keys", (e) => `${envPath(e)}/publishable-keys`),
    { ...read("…/services", (e) => `${envPath(e)}/services`, "aggregation"), floor: "services" },
    read("…/logs", (e) => `${envPath(e)}/logs`),
    read("…/traces/{id}", (e) => `${envPath(e)}/traces/${pick(e.traces)}`),
    read("…/problems", (e) => `${envPath(e)}/problems`, "aggregation"),
    read("…/problems?status=open", (e) => `${envPath(e)}/problems?status=open`, "aggregation"),
    read("…/problems/{id}", (e) => `${envPath(e)}/problems/${pick(e.problems)}`),
    read("…/repositories", (e) => `${envPath(e)}/repositories`),
    read("…/remediations", (e) => `${envPath(e)}/remediations`),
    {
      label: "POST …/mcp-connections (Idempotency-Key)",
      cls: "write",
      request: () => {
        const e = pick(environments);
        created += 1;
        return {
          path: `/api/v1${envPath(e)}/mcp-connections`,
          method: "POST",
          expectStatus: 201,
          headers: { ...auth(e), "content-type": "application/json", "idempotency-key": crypto.randomUUID() },
          body: JSON.stringify({
            alias: `w-${runTag}-${created}`,
            displayName: `Written ${created}`,
            endpointUrl: `https://w${created}.example.com/mcp`,
            auth: { kind: "none" },
          }),
        };
      },
    },
    {
      label: "PATCH …/mcp-connections/{id} (If-Match)",
      cls: "write",
      request: (worker) => {
        const { e, c } = workerConnection(worker, 0);
        return {
          path: `/api/v1${envPath(e)}/mcp-connections/${c.id}`,
          method: "PATCH",
          headers: change(e, c.id),
          body: JSON.stringify({ displayName: `Renamed ${Math.random().toString(36).slice(2, 8)}` }),
          after: keepRevision(c.id),
        };
      },
    },
    {
      label: "POST …/tool-approvals (If-Match)",
      cls: "write",
      request: (worker) => {
        const { e, c } = workerConnection(worker, 8);
        return {
          path: `/api/v1${envPath(e)}/mcp-connections/${c.id}/tool-approvals`,
          method: "POST",
          headers: change(e, c.id),
          body: JSON.stringify({ discoveryId: c.discoveryId, toolNames: c.toolNames.slice(0, 4) }),
          after: keepRevision(c.id),
        };
      },
    },
    mcp("list_mcp_connections", "list_mcp_connections", (e) => ({ environmentId: e.environmentId })),
    mcp("get_mcp_connection", "get_mcp_connection", (e) => ({
      environmentId: e.environmentId,
      connectionId: pick(e.connections).id,
    })),
    mcp("list_task_call_approvals", "list_task_call_approvals", (e) => ({
      environmentId: e.environmentId,
      taskId: pick(e.tasks),
    })),
  ];
}

/** The environment for the patchbay child: development mode (no KEK/base URL needed), quiet logs. */
function patchbayEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    // Thousands of requests a second per key: limits this high keep the limiter on the measured
    // path without refusing (the environment may override them, e.g. 0 to measure without).
    PATCHBAY_RATE_LIMIT_KEY_PER_MINUTE: "1000000000",
    PATCHBAY_RATE_LIMIT_ORG_PER_MINUTE: "1000000000",
    ...process.env,
    NODE_ENV: "development",
    LOG_LEVEL: settings.logLevel,
    ...extra,
  };
  delete env.PATCHBAY_KEK;
  delete env.PATCHBAY_BASE_URL;
  return env;
}

/** CPU seconds of the PostgreSQL backends serving `database` (their command line names it). */
function databaseCpuSeconds(database: string): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(` ${database} `)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      total += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

type CpuSample = {
  server: number | null;
  db: number | null;
  client: number;
  machine: ReturnType<typeof machineCpuSeconds>;
};

async function measure(
  label: string,
  cls: Row["cls"],
  base: string,
  pid: number,
  database: string | null,
  next: (worker: number) => LoadRequest,
): Promise<Row> {
  log(`${label}`);
  const samples: Partial<Record<"start" | "end", CpuSample>> = {};
  const result = await runLoad({
    url: base,
    request: next,
    connections: settings.connections,
    warmupMs: settings.warmupSeconds * 1000,
    durationMs: settings.seconds * 1000,
    signal: interrupt.signal,
    onWindow(edge) {
      const self = process.cpuUsage();
      samples[edge] = {
        server: processCpuSeconds(pid),
        db: database ? databaseCpuSeconds(database) : 0,
        client: (self.user + self.system) / 1e6,
        machine: machineCpuSeconds(),
      };
    },
  });
  interrupt.signal.throwIfAborted();
  if (result.errors) log(`${label}: ${result.errors} failed requests`);
  const { start, end } = samples;
  const perReq = (a: number | null | undefined, b: number | null | undefined) =>
    a == null || b == null || result.requests === 0 ? null : ((b - a) / result.requests) * 1e6;
  let otherPct: number | null = null;
  if (start?.machine && end?.machine) {
    const wall = (end.machine.total - start.machine.total) / availableParallelism();
    const used =
      (end.server ?? 0) -
      (start.server ?? 0) +
      ((end.db ?? 0) - (start.db ?? 0)) +
      (end.client - start.client);
    if (wall > 0) otherPct = Math.max(0, ((end.machine.busy - start.machine.busy - used) / wall) * 100);
  }
  return {
    ...result,
    label,
    cls,
    serverUs: perReq(start?.server, end?.server),
    dbUs: perReq(start?.db, end?.db),
    otherPct,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

const FLOOR_LABELS: Record<FloorKind, string> = {
  /** The bare route plus one prepared PostgreSQL query: what a read that makes one query can reach. */
  read: "bare Hono + 1 PostgreSQL query",
  /** The bare route plus one committed single-row INSERT: what a write that commits once can reach. */
  write: "bare Hono + 1 committed INSERT",
  /** The bare route plus patchbay's services statement: what that aggregation can reach. */
  services: "bare Hono + the services statement",
};

function report(
  bareRows: Row[],
  floors: Record<FloorKind, Row[]>,
  floorOf: Map<string, FloorKind>,
  rows: Row[],
  routes: Route[],
): number {
  const bareRps = median(bareRows.map((r) => r.rps));
  const bareP99 = median(bareRows.map((r) => r.p99Ms));
  const floorRps = median(floors.read.map((r) => r.rps));
  const writeFloorRps = median(floors.write.map((r) => r.rps));
  const servicesFloorRps = median(floors.services.map((r) => r.rps));
  const floorRpsOf: Record<FloorKind, number> = {
    read: floorRps,
    write: writeFloorRps,
    services: servicesFloorRps,
  };
  const floorFor = (label: string) => floorRpsOf[floorOf.get(label) ?? "read"];
  const floorRows = [...floors.read, ...floors.write, ...floors.services];
  const header = [
    "route",
    "class",
    "req/s",
    "p50 ms",
    "p99 ms",
    "vs bare",
    "vs floor",
    "goal",
    "p99 × bare",
    "server µs",
    "db µs",
    "other",
    "verdict",
  ];
  const us = (v: number | null) => (v === null ? "—" : v.toFixed(0));
  const pct = (v: number | null) => (v === null ? "—" : `${v.toFixed(0)} %`);
  const table = [
    ...[...bareRows, ...floorRows].map((r) => [
      r.label,
      r.cls,
      r.rps.toFixed(0),
      r.p50Ms.toFixed(2),
      r.p99Ms.toFixed(2),
      r.cls === "floor" ? `${((r.rps / bareRps) * 100).toFixed(1)} %` : "",
      "",
      "",
      "",
      us(r.serverUs),
      r.cls === "floor" ? us(r.dbUs) : "",
      pct(r.otherPct),
      "",
    ]),
    ...rows.map((r) => {
      const goal = r.cls === "bare" || r.cls === "floor" ? 0 : GOALS[r.cls];
      const ratio = r.rps / bareRps;
      const p99Ratio = r.p99Ms / bareP99;
      const pass = r.errors === 0 && ratio >= goal && p99Ratio <= P99_GOAL;
      return [
        r.label,
        r.cls,
        r.rps.toFixed(0),
        r.p50Ms.toFixed(2),
        r.p99Ms.toFixed(2),
        `${(ratio * 100).toFixed(1)} %`,
        `${((r.rps / floorFor(r.label)) * 100).toFixed(1)} %`,
        `≥ ${(goal * 100).toFixed(0)} %`,
        `${p99Ratio.toFixed(1)}×`,
        us(r.serverUs),
        us(r.dbUs),
        pct(r.otherPct),
        pass ? "PASS" : r.errors ? "FAIL (errors)" : "FAIL",
      ];
    }),
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of table) console.log(line(row));
  const passed = table.filter((r) => r[12] === "PASS").length;
  console.log(
    `\nBaseline: median of ${bareRows.length} bare runs, ${bareRps.toFixed(0)} req/s, p99 ${bareP99.toFixed(2)} ms. ` +
      `Goals: reads ≥ ${GOALS.read * 100} %, aggregations ≥ ${GOALS.aggregation * 100} %, writes ≥ ${GOALS.write * 100} % ` +
      `of its req/s; p99 ≤ ${P99_GOAL}× its p99. ${passed} of ${rows.length} rows pass.\n` +
      `Floor of a read that makes one query (${FLOOR_LABELS.read}, a page of API keys; median of ${floors.read.length}): ` +
      `${floorRps.toFixed(0)} req/s, ${((floorRps / bareRps) * 100).toFixed(1)} % of the bare route.\n` +
      `Floor of a write that commits once (${FLOOR_LABELS.write}, one row; median of ${floors.write.length}): ` +
      `${writeFloorRps.toFixed(0)} req/s, ${((writeFloorRps / bareRps) * 100).toFixed(1)} % of the bare route.\n` +
      (floors.services.length
        ? `Floor of the services aggregation (${FLOOR_LABELS.services}; median of ${floors.services.length}): ` +
          `${servicesFloorRps.toFixed(0)} req/s, ${((servicesFloorRps / bareRps) * 100).toFixed(1)} % of the bare route.\n`
        : "") +
      `"vs floor" is a write's share of the write floor, the services row's share of the services floor, any other row's share of the read floor.\n` +
      "server µs / db µs = CPU of the patchbay process / of its database's PostgreSQL backends per response;" +
      ` other = CPU used by unrelated processes, % of one core (${availableParallelism() * 100} % = all).` +
      `\nLoad average at the end: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}.`,
  );
  const measured = new Set(routes.map((r) => r.label));
  const skipped = [
    "GET …/repositories/{id}",
    "GET …/remediations/{id} (and its proposed-change, review)",
    "GET /integrations/github/installations/{id}/repositories",
  ];
  if (measured.size)
    console.log(`Not measured (needs a GitHub App or a remediation run): ${skipped.join("; ")}.`);
  const failed = [...bareRows, ...floorRows, ...rows].filter((r) => r.errors > 0);
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

function track(child: Child): Child {
  children.add(child);
  return child;
}

function positiveNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got ${raw}`);
  return value;
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
