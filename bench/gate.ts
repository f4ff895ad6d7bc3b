/**
 * `npm run bench:gate`: one tool call of a running task through patchbay's runtime
 * (`callSnapshotTool`: gate and attempt record in one committed statement → remote call
 * through egress → the record finished after) next to a direct MCP SDK `Client.callTool` on the
 * same loopback HTTPS MCP server, on PostgreSQL. Goals: for a tool that answers at once, a median
 * within direct's median + one committed single-row INSERT's median (measured in the same run) +
 * 0.2 ms, the floor the specification's record-before-send sets; for a tool that takes 20 ms or
 * more, within 1.05× of direct; the gate's own check under 1 ms at p99. See docs/performance.md.
 *
 * The floor is a side of its own: the call's row INSERTed and committed, then the direct call.
 * The INSERT's median in the goal is timed there, between calls: a statement on a connection
 * that sat idle while a call ran costs more than one sent right after another (the database
 * backend and this process wake up), and a gated call's record always comes after such a wait.
 * The back-to-back INSERT is printed beside it. `select 1` is the floor of the gate read's p99.
 *
 * Processes: the MCP server runs in its own process, so its CPU never lands on the measured
 * event loop. Both sides run in one measuring process against that one server, in batches that
 * never overlap: round 1 direct → patchbay → …, round 2 the reverse, and so on, samples pooled.
 * Sharing the process gives both sides the same JIT, GC and machine moment (on a 2-core machine
 * two measuring processes would also compete for a core with the server and PostgreSQL). The
 * orchestrator (this process without arguments) creates and drops the database and prints.
 *
 * Also measured, in the same rounds: the call followed by `SessionPool.settle()` (its record
 * final, as a one-call step of a task waits for it); patchbay's remote path alone (the task's
 * `RemoteSession`, no database); `checkGate` (the plain gate read), `select 1`, and `openAttempt` (gate +
 * attempt row, committed) alone, and the same row's INSERT without the gate; the call split
 * into its steps (lib/gate-variants.ts); and a bench-only what-if with the records committed
 * asynchronously. Every patchbay-side call must
 * leave a finished record (`ok`), and every `openAttempt` alone or bench INSERT an `ambiguous` one;
 * the run fails otherwise.
 *
 * Env: BENCH_CALLS (150 per batch), BENCH_ROUNDS (8), BENCH_WARMUP (50 per side),
 * BENCH_TOOL_DELAY_MS (0: the tool answers at once), BENCH_APPROVED_TOOLS (1: only `echo`),
 * BENCH_PG_URL (admin URL, default postgres://postgres@127.0.0.1:5432/postgres).
 *
 * Exit code: 0 when the run worked (whether or not the goals are met), 1 on any error.
 */

import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import type { TestCa } from "../test/lib/egress-servers.ts";
import { startChild as startChildRole } from "./lib/child-role.ts";
import { SPLIT_STEPS, type Split } from "./lib/gate-variants.ts";
import { machineCpuSeconds, postgresCpuSeconds, processCpuSeconds } from "./lib/processes.ts";

/** What a gated call may add beyond direct + one committed INSERT (a tool that answers at once). */
const GOAL_HEADROOM_MS = 0.2;
/** The ratio to direct for a tool that takes at least SLOW_TOOL_MS. */
const GOAL_SLOW_TOOL_RATIO = 1.05;
const SLOW_TOOL_MS = 20;
const GOAL_GATE_P99_MS = 1;

const settings = {
  calls: positiveInt("BENCH_CALLS", 150),
  rounds: positiveInt("BENCH_ROUNDS", 8),
  warmup: positiveInt("BENCH_WARMUP", 50),
  /** The remote tool's own latency (0: answers at once, the hardest case for a ratio). */
  toolDelayMs: nonNegativeInt("BENCH_TOOL_DELAY_MS", 0),
  /** Tools approved on the connection: `echo` plus realistic others (the gate reads them all). */
  approvedTools: positiveInt("BENCH_APPROVED_TOOLS", 1),
  pgUrl: process.env.BENCH_PG_URL || "postgres://postgres@127.0.0.1:5432/postgres",
};

const SIDES = [
  "direct",
  "recordedDirect",
  "remoteOnly",
  "patchbay",
  "patchbayStep",
  "asyncCommit",
  "split",
  "gate",
  "roundTrip",
  "attempt",
  "insert",
] as const;
type Side = (typeof SIDES)[number];
type ServerInfo = { url: string; port: number; caFile: string; caJson: string; pid: number };
type Result = {
  samples: Record<Side, number[]>;
  /** The INSERT of `recordedDirect`, timed apart: a committed INSERT as it costs between calls. */
  insertBeforeCall: number[];
  /** Measuring-process CPU (user + system) per call, ms. */
  cpuMs: Record<Side, number>;
  splits: Split[];
  cold: { directConnectMs: number; patchbayFirstCallMs: number };
  /** Rows of the task by outcome, and what the calls made should have left. */
  recorded: Record<string, number>;
  expected: { ok: number; ambiguous: number };
  /** Over the measured rounds, % of one core: this process, the MCP server, every PostgreSQL
   *  backend, and everything else on the machine (null where /proc is unavailable). */
  cpuPercent: { bench: number; server: number | null; postgres: number | null; other: number | null };
};

/** Above this much CPU (% of one core) used by unrelated processes during the rounds, the figures are suspect. */
const NOISY_OTHER_CPU = 25;

const STEP_LABELS: Record<(typeof SPLIT_STEPS)[number], string> = {
  session: "`SessionPool.checked` (session and drift verdict, memory)",
  attempt: "gate + attempt: `openAttempt` (1 statement, committed)",
  remote: "remote: `RemoteSession.callTool` (egress, SDK)",
  normalize: "`normalizeResult` + `validateStructuredContent`",
  finish: "finish: `finishToolCalls` (1 UPDATE; at the step's end when shipped)",
};

const started = performance.now();
const self = fileURLToPath(import.meta.url);
const role = process.argv[2];

if (role === "server") await serve();
else if (role === "client") await measure();
else process.exitCode = await main();

// ---------------------------------------------------------------- orchestration

async function main(): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), "patchbay-bench-gate-"));
  const admin = postgres(settings.pgUrl, { max: 1, onnotice: () => {} });
  const name = `patchbay_bench_${randomBytes(6).toString("hex")}`;
  let created = false;
  let server: Awaited<ReturnType<typeof startChild>> | undefined;
  let client: Awaited<ReturnType<typeof startChild>> | undefined;
  let cleaned: Promise<void> | undefined;
  const cleanUp = () => {
    cleaned ??= (async () => {
      client?.kill();
      server?.kill();
      if (created) await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end({ timeout: 5 }).catch(() => {});
      rmSync(work, { recursive: true, force: true });
    })();
    return cleaned;
  };
  process.once("SIGINT", () => void cleanUp().finally(() => process.exit(130)));
  try {
    const load = loadavg();
    console.log(
      `patchbay bench:gate — ${availableParallelism()} × ${cpus()[0]?.model ?? "unknown CPU"}, node ${process.version}, load ${fmt(load[0] ?? 0, 2)}\n` +
        `${settings.rounds} rounds × ${settings.calls} calls per side after ${settings.warmup} warm-up; ` +
        `tool delay ${settings.toolDelayMs} ms, ${settings.approvedTools} approved tool(s); PostgreSQL database ${name}\n`,
    );
    await admin.unsafe(`create database ${name}`);
    created = true;
    const url = new URL(settings.pgUrl);
    url.pathname = `/${name}`;
    server = await startChild(["server", work], "READY");
    const info = JSON.parse(server.firstLine) as ServerInfo;
    client = await startChild(["client"], "RESULT", {
      BENCH_SERVER: JSON.stringify(info),
      BENCH_DATABASE_URL: url.toString(),
      // The direct side uses the SDK's default fetch, which trusts the test CA only this way.
      NODE_EXTRA_CA_CERTS: info.caFile,
    });
    const result = JSON.parse(client.firstLine) as Result;
    await client.exited;
    report(result, load[0] ?? 0, loadavg()[0] ?? 0);
    if (!recordsMatch(result)) {
      console.error(
        `the call record does not match the calls made: ${JSON.stringify(result.recorded)}, expected ${JSON.stringify(result.expected)}`,
      );
      return 1;
    }
    return 0;
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    return 1;
  } finally {
    await cleanUp();
  }
}

function recordsMatch(r: Result): boolean {
  const outcomes = Object.keys(r.recorded).filter((outcome) => (r.recorded[outcome] ?? 0) > 0);
  return (
    (r.recorded.ok ?? 0) === r.expected.ok &&
    (r.recorded.ambiguous ?? 0) === r.expected.ambiguous &&
    outcomes.every((outcome) => outcome === "ok" || outcome === "ambiguous")
  );
}

function report(r: Result, loadBefore: number, loadAfter: number): void {
  const p = (side: Side, q: number) => percentile(r.samples[side], q);
  const callRow = (label: string, side: Side) =>
    `| ${label} | ${r.samples[side].length} | ${fmt(p(side, 50), 3)} | ${fmt(p(side, 95), 3)} | ${fmt(p(side, 99), 3)} | ${fmt(r.cpuMs[side], 3)} |`;
  const vsDirect = (side: Side) =>
    `median ${fmt(p(side, 50) / p("direct", 50), 2)}× (+${fmt(p(side, 50) - p("direct", 50), 3)} ms), p99 ${fmt(p(side, 99) / p("direct", 99), 2)}×`;
  const ratio = p("patchbay", 50) / p("direct", 50);
  // The INSERT as it costs between calls (the connection idle while a call runs), not back to back.
  const insertMedian = percentile(r.insertBeforeCall, 50);
  const budget = p("direct", 50) + insertMedian + GOAL_HEADROOM_MS;
  const gateP99 = p("gate", 99);
  const splitTotals = r.splits.map((s) => s.total);
  const meanTotal = mean(splitTotals);
  const stepRow = (step: (typeof SPLIT_STEPS)[number]) => {
    const values = r.splits.map((s) => s[step]);
    return `| ${STEP_LABELS[step]} | ${fmt(percentile(values, 50), 3)} | ${fmt(percentile(values, 95), 3)} | ${fmt(mean(values), 3)} | ${fmt((100 * mean(values)) / meanTotal, 0)} % |`;
  };
  console.log(
    [
      "| side | calls | median ms | p95 ms | p99 ms | client CPU ms/call |",
      "|---|---:|---:|---:|---:|---:|",
      callRow("direct: SDK `Client.callTool` (default fetch)", "direct"),
      callRow("floor: a committed INSERT of the call's row, then direct (bench-only)", "recordedDirect"),
      callRow("patchbay: `callSnapshotTool` (gate + attempt, egress; finish behind)", "patchbay"),
      callRow("patchbay, record final: `callSnapshotTool` + `settle()`", "patchbayStep"),
      callRow("patchbay's remote path alone: `RemoteSession.callTool` (egress, no database)", "remoteOnly"),
      callRow("what-if: records committed asynchronously (bench-only)", "asyncCommit"),
      callRow("`checkGate` alone (the gate read)", "gate"),
      callRow("floor: `select 1`, one round trip (bench-only)", "roundTrip"),
      callRow("`openAttempt` alone (gate + attempt row, committed)", "attempt"),
      callRow("a prepared INSERT of the same row alone, no gate (bench-only)", "insert"),
      "",
      settings.toolDelayMs >= SLOW_TOOL_MS
        ? `patchbay / direct: ${vsDirect("patchbay")} — goal ≤ ${GOAL_SLOW_TOOL_RATIO}×: ${ratio <= GOAL_SLOW_TOOL_RATIO ? "met" : "NOT met"}; floor / direct: ${vsDirect("recordedDirect")}; patchbay / floor: ${fmt(p("patchbay", 50) / p("recordedDirect", 50), 2)}×`
        : `patchbay / direct: ${vsDirect("patchbay")} — goal: median ≤ direct ${fmt(p("direct", 50), 3)} + one committed INSERT ${fmt(insertMedian, 3)} (timed in the floor's calls; ${fmt(p("insert", 50), 3)} back to back) + ${GOAL_HEADROOM_MS} = ${fmt(budget, 3)} ms: ${p("patchbay", 50) <= budget ? "met" : "NOT met"} (${fmt(p("patchbay", 50) - budget, 3)} ms ${p("patchbay", 50) <= budget ? "under" : "over"}); patchbay / floor: ${fmt(p("patchbay", 50) / p("recordedDirect", 50), 2)}×`,
      `patchbay with its record final / direct: ${vsDirect("patchbayStep")}`,
      `checkGate p99 ${fmt(gateP99, 3)} ms (p50 ${fmt(p("gate", 50), 3)}) — goal < ${GOAL_GATE_P99_MS} ms: ${gateP99 < GOAL_GATE_P99_MS ? "met" : "NOT met"}; floor \`select 1\` p99 ${fmt(p("roundTrip", 99), 3)} ms (p50 ${fmt(p("roundTrip", 50), 3)}); ` +
        `openAttempt p99 ${fmt(p("attempt", 99), 3)} ms (p50 ${fmt(p("attempt", 50), 3)})`,
      `what-if asynchronous commit / direct: ${vsDirect("asyncCommit")}`,
      "",
      `Where a patchbay call's time goes (${r.splits.length} instrumented calls, same verbs, finish awaited; total median ${fmt(percentile(splitTotals, 50), 3)} ms, mean ${fmt(meanTotal, 3)} ms):`,
      "",
      "| step | median ms | p95 ms | mean ms | share of mean |",
      "|---|---:|---:|---:|---:|",
      ...SPLIT_STEPS.map(stepRow),
      "",
      `Cold: direct connect (initialize) ${fmt(r.cold.directConnectMs, 1)} ms; patchbay's first call of the task ${fmt(r.cold.patchbayFirstCallMs, 1)} ms (gate read + session open + initialize + tools/list + drift verdict insert + gate and attempt + call).`,
      `Call records: ${JSON.stringify(r.recorded)}; expected ${JSON.stringify(r.expected)} (every call recorded and finished: ${recordsMatch(r) ? "yes" : "NO"}). Load average before/after: ${fmt(loadBefore, 2)}/${fmt(loadAfter, 2)}.`,
      `CPU during the rounds (% of one core): bench ${pctText(r.cpuPercent.bench)}, MCP server ${pctText(r.cpuPercent.server)}, PostgreSQL ${pctText(r.cpuPercent.postgres)}, other processes ${pctText(r.cpuPercent.other)}.`,
      ...((r.cpuPercent.other ?? 0) > NOISY_OTHER_CPU
        ? [
            `WARNING: other processes used more than ${NOISY_OTHER_CPU} % of a core during the rounds: each database round trip and each HTTP answer then waits to be scheduled, which inflates patchbay (more hand-offs per call) more than direct. Compare quiet runs only.`,
          ]
        : []),
    ].join("\n"),
  );
}

function startChild(args: string[], marker: string, env: Record<string, string> = {}) {
  return startChildRole(self, args, marker, env);
}

// ---------------------------------------------------------------- roles

async function serve(): Promise<void> {
  const { makeTestCa } = await import("../test/lib/egress-servers.ts");
  const { echoTool, manyTools, slowTool, startMcpServer } = await import("../test/lib/mcp-servers.ts");
  const ca = await makeTestCa();
  const echo = settings.toolDelayMs > 0 ? slowTool(settings.toolDelayMs, "echo") : echoTool("echo");
  const others = settings.approvedTools > 1 ? manyTools(settings.approvedTools - 1) : [];
  const server = await startMcpServer({ ca, tools: [echo, ...others] });
  const dir = process.argv[3] ?? tmpdir();
  const info: ServerInfo = {
    url: server.url,
    port: server.port,
    caFile: join(dir, "ca.pem"),
    caJson: join(dir, "ca.json"),
    pid: process.pid,
  };
  writeFileSync(info.caFile, ca.cert);
  writeFileSync(info.caJson, JSON.stringify(ca));
  // The log of every request would grow for the whole run; this bench never reads it.
  setInterval(() => server.requests.splice(0), 1_000).unref();
  console.log(`READY ${JSON.stringify(info)}`);
  process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
}

async function measure(): Promise<void> {
  const info = JSON.parse(process.env.BENCH_SERVER ?? "{}") as ServerInfo;
  const ca = JSON.parse(readFileSync(info.caJson, "utf8")) as TestCa;
  const { count, eq, sql } = await import("drizzle-orm");
  const { taskToolCalls } = await import("../src/platform/db/schema/tasks.ts");
  const { callSnapshotTool, DEFAULT_CALL_TIMEOUT_MS } = await import(
    "../src/features/tasks/call-snapshot-tool.ts"
  );
  const { checkGate, openAttempt } = await import("../src/features/tasks/gate.ts");
  const { recordToolCall } = await import("../src/features/tasks/call-record.ts");
  const { SessionPool } = await import("../src/features/tasks/session-pool.ts");
  const { setUpGateBench } = await import("./lib/gate-setup.ts");
  const { splitCall } = await import("./lib/gate-variants.ts");

  const bench = await setUpGateBench({
    databaseUrl: process.env.BENCH_DATABASE_URL ?? "",
    ca,
    port: info.port,
    endpointUrl: info.url,
  });
  const { deps, task, tool, frozen } = bench;
  const input = { text: "p99 latency of checkout in eu-west-1" };

  let t = performance.now();
  const direct = await directClient(info.url);
  const directConnectMs = performance.now() - t;

  const sessions = new SessionPool(deps);
  // The what-if: the same verbs on a pool whose sessions commit asynchronously.
  const asyncDeps = { ...deps, db: bench.asyncCommitDb };
  const asyncSessions = new SessionPool(asyncDeps);
  const expected = { ok: 0, ambiguous: 0 };
  const splits: Split[] = [];
  const insertBeforeCall: number[] = [];
  /** The call's row as the attempt writes it, without the gate around it. */
  const attemptRow = () => ({
    taskId: task.id,
    modelToolName: tool.modelName,
    connectionId: tool.connectionId,
    connectionRevision: frozen.revision,
    toolName: tool.toolName,
    startedAt: deps.clock(),
    durationMs: 0,
    outcome: "ambiguous" as const,
    errorCode: null,
  });
  const run: Record<Side, () => Promise<void>> = {
    direct: async () => {
      const result = await direct.callTool({ name: "echo", arguments: input });
      if (result.isError) throw new Error("direct echo failed");
    },
    recordedDirect: async () => {
      // The floor: the row committed (it stays `ambiguous`), then the direct call.
      expected.ambiguous++;
      const inserted = performance.now();
      await recordToolCall(deps.db, attemptRow());
      insertBeforeCall.push(performance.now() - inserted);
      const result = await direct.callTool({ name: "echo", arguments: input });
      if (result.isError) throw new Error("direct echo failed");
    },
    remoteOnly: async () => {
      const session = sessions.checked(frozen.connectionId);
      if (!session) throw new Error("no session");
      const result = await session.callTool(tool.toolName, input, DEFAULT_CALL_TIMEOUT_MS);
      if (result.isError) throw new Error("remote echo failed");
    },
    patchbay: async () => {
      expected.ok++;
      const output = await callSnapshotTool({ deps, task, tool, input, sessions });
      if (output.outcome !== "ok") throw new Error(`patchbay call: ${output.outcome} ${output.error}`);
    },
    patchbayStep: async () => {
      expected.ok++;
      const output = await callSnapshotTool({ deps, task, tool, input, sessions });
      await sessions.settle();
      if (output.outcome !== "ok") throw new Error(`patchbay call: ${output.outcome} ${output.error}`);
    },
    asyncCommit: async () => {
      expected.ok++;
      const output = await callSnapshotTool({ deps: asyncDeps, task, tool, input, sessions: asyncSessions });
      if (output.outcome !== "ok") throw new Error(`what-if call: ${output.outcome} ${output.error}`);
    },
    split: async () => {
      expected.ok++;
      splits.push(await splitCall(bench, sessions, input));
    },
    gate: async () => {
      await checkGate(deps.db, task, frozen);
    },
    roundTrip: async () => {
      // The floor of any statement: one round trip that reads nothing.
      await deps.db.execute(sql`select 1`);
    },
    attempt: async () => {
      // An attempt that is never sent nor finished: it stays `ambiguous`, and is counted so.
      expected.ambiguous++;
      await openAttempt(deps.db, { task, frozen, tool, startedAt: deps.clock() });
    },
    insert: async () => {
      // The same row without the gate around it: what the gate adds inside the statement.
      expected.ambiguous++;
      await recordToolCall(deps.db, attemptRow());
    },
  };
  // Finishing writes still running behind a batch are waited for inside that batch's CPU window.
  const settleAll = () => Promise.all([sessions.settle(), asyncSessions.settle()]);

  // The task's first call opens the session and stores the drift verdict: timed on its own.
  t = performance.now();
  await run.patchbay();
  const patchbayFirstCallMs = performance.now() - t;
  for (const side of SIDES) for (let i = 0; i < settings.warmup; i++) await run[side]();
  await settleAll();
  splits.length = 0;
  insertBeforeCall.length = 0;

  const window = cpuWindow(info.pid);
  const samples = Object.fromEntries(SIDES.map((side) => [side, [] as number[]])) as Record<Side, number[]>;
  const cpuMicros = Object.fromEntries(SIDES.map((side) => [side, 0])) as Record<Side, number>;
  for (let round = 0; round < settings.rounds; round++) {
    const order = round % 2 === 0 ? [...SIDES] : [...SIDES].reverse();
    log(`round ${round + 1}/${settings.rounds}: ${order.join(" → ")}`);
    for (const side of order) {
      const cpuBefore = process.cpuUsage();
      for (let i = 0; i < settings.calls; i++) {
        const callStarted = performance.now();
        await run[side]();
        samples[side].push(performance.now() - callStarted);
      }
      await settleAll();
      const cpu = process.cpuUsage(cpuBefore);
      cpuMicros[side] += cpu.user + cpu.system;
    }
  }
  const cpuPercent = window.end();
  await settleAll();
  const rows = await deps.db
    .select({ outcome: taskToolCalls.outcome, n: count() })
    .from(taskToolCalls)
    .where(eq(taskToolCalls.taskId, task.id))
    .groupBy(taskToolCalls.outcome);
  const result: Result = {
    samples,
    cpuMs: Object.fromEntries(
      SIDES.map((side) => [side, cpuMicros[side] / 1000 / samples[side].length]),
    ) as Record<Side, number>,
    insertBeforeCall,
    splits,
    cold: { directConnectMs, patchbayFirstCallMs },
    recorded: Object.fromEntries(rows.map((row) => [row.outcome, row.n])),
    expected,
    cpuPercent,
  };
  // process.exit does not wait for a piped stdout to drain: write, then wait for the flush.
  await new Promise<void>((resolve) =>
    process.stdout.write(`RESULT ${JSON.stringify(result, compact)}\n`, () => resolve()),
  );
  await direct.close();
  await sessions.closeAll();
  await asyncSessions.closeAll();
  await bench.close();
  process.exit(0);
}

/** CPU used from now until `end()`, split by who used it (see `Result.cpuPercent`). */
function cpuWindow(serverPid: number) {
  const wall = performance.now();
  const self = process.cpuUsage();
  const server = processCpuSeconds(serverPid);
  const pg = postgresCpuSeconds();
  const machine = machineCpuSeconds();
  return {
    end(): Result["cpuPercent"] {
      const seconds = (performance.now() - wall) / 1000;
      const own = process.cpuUsage(self);
      const bench = (own.user + own.system) / 1e6;
      const serverNow = processCpuSeconds(serverPid);
      const pgNow = postgresCpuSeconds();
      const machineNow = machineCpuSeconds();
      const serverUsed = server !== null && serverNow !== null ? serverNow - server : null;
      const pgUsed = pg !== null && pgNow !== null ? pgNow - pg : null;
      const other =
        machine && machineNow && serverUsed !== null && pgUsed !== null
          ? Math.max(0, machineNow.busy - machine.busy - bench - serverUsed - pgUsed)
          : null;
      const pct = (used: number | null) => (used === null ? null : (100 * used) / seconds);
      return {
        bench: (100 * bench) / seconds,
        server: pct(serverUsed),
        postgres: pct(pgUsed),
        other: pct(other),
      };
    },
  };
}

/** The SDK as documented: a client and its Streamable HTTP transport with the default fetch. */
async function directClient(url: string) {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import(
    "@modelcontextprotocol/sdk/client/streamableHttp.js"
  );
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
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

/** JSON replacer: sample times to 0.1 µs, enough for the table and a fraction of the bytes. */
function compact(_key: string, value: unknown): unknown {
  return typeof value === "number" && !Number.isInteger(value) ? Math.round(value * 1e4) / 1e4 : value;
}

function mean(values: number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

function pctText(value: number | null): string {
  return value === null ? "n/a" : `${fmt(value, 0)} %`;
}

function fmt(value: number, digits = 1): string {
  return value.toFixed(digits);
}

function nonNegativeInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer`);
  return value;
}

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}
