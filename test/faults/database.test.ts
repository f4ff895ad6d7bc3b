import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { generateKek } from "../../src/platform/vault/keyring.ts";
import { runPatchbay, type SpawnedServer, spawnServer } from "../lib/spawn-server.ts";
import { type PgCluster, startPgCluster } from "./lib/pg-cluster.ts";
import { startTcpProxy, type TcpProxy } from "./lib/tcp-proxy.ts";
import { HANG_BOUND_MS, type Outcome, startTraffic, storedOf, type Traffic, tally } from "./lib/traffic.ts";

/**
 * The database going away under load, against two real instances on a PostgreSQL cluster of the
 * suite's own, reached through a TCP proxy the suite controls. Each scenario runs steady traffic
 * (OTLP ingest, API-key reads, idempotent REST writes), causes its fault, and checks the goals:
 * no crash, no request past the bound, no 500, nothing acknowledged lost, `/readyz` honest, and
 * recovery within 5 s of the database's return. Each prints its table.
 */

/** How long the database stays stopped in the stop scenario. */
const OUTAGE_MS = Number(process.env.PATCHBAY_FAULTS_OUTAGE_SECONDS ?? 30) * 1000;
/** The service's promise: ready and serving again within this long after the database returns. */
const RECOVERY_BOUND_MS = 5_000;
/** How many times the cut scenario cuts every connection. */
const CUT_WAVES = 12;
/** `/readyz` must tell the truth within a second. */
const READYZ_BOUND_MS = 1_000;

type Tenant = { organizationId: string; environmentId: string; userId: string; apiKey: string };

type Report = {
  scenario: string;
  hangBoundMs: number;
  outcomes: Outcome[];
  recoveryMs: number | undefined;
  readyzFlipMs: number | undefined;
  acked: { traces: number; writes: number };
  stored: { traces: number; writes: number; duplicateWrites: number };
  crashes: number;
};

function printReport(r: Report): void {
  const statuses = tally(r.outcomes);
  const slowest = Math.max(0, ...r.outcomes.map((o) => o.ms));
  const lines = [
    `── ${r.scenario} ──`,
    ...Object.entries(statuses).map(
      ([kind, row]) =>
        `  ${kind.padEnd(7)} ${Object.entries(row)
          .map(([status, n]) => `${status}×${n}`)
          .join("  ")}`,
    ),
    `  slowest request ${slowest} ms (bound ${r.hangBoundMs} ms); over the bound: ${r.outcomes.filter((o) => o.ms > r.hangBoundMs).length}`,
    `  acknowledged → stored: traces ${r.acked.traces} → ${r.stored.traces}, writes ${r.acked.writes} → ${r.stored.writes} (duplicates ${r.stored.duplicateWrites})`,
    `  /readyz 503 after the fault: ${r.readyzFlipMs ?? "n/a"} ms; recovered after the database returned: ${r.recoveryMs ?? "never"} ms`,
    `  crashes: ${r.crashes}`,
  ];
  console.log(lines.join("\n"));
}

describe("the database going away under load", () => {
  let cluster: PgCluster;
  let proxy: TcpProxy;
  let sql: postgres.Sql;
  let servers: SpawnedServer[] = [];
  let tenant: Tenant;
  let publishableKey: string;
  const tempDirs: string[] = [];

  beforeAll(async () => {
    cluster = await startPgCluster();
    const direct = await cluster.createDatabase("patchbay");
    sql = postgres(direct, { max: 2, onnotice: () => {} });
    proxy = await startTcpProxy({ host: "127.0.0.1", port: cluster.port });
    const viaProxy = `postgres://postgres@127.0.0.1:${proxy.port}/patchbay`;
    const kek = generateKek();
    const env = (dataDir: string) => ({
      DATABASE_URL: viaProxy,
      NODE_ENV: "development",
      LOG_LEVEL: "warn",
      PATCHBAY_DATA_DIR: dataDir,
      PATCHBAY_KEK: kek,
      // The traffic is steady and light; per-key limits would only add 429s to the tables.
      PATCHBAY_RATE_LIMIT_KEY_PER_MINUTE: "0",
      PATCHBAY_RATE_LIMIT_ORG_PER_MINUTE: "0",
    });
    const dataDir = async () => {
      const dir = await mkdtemp(join(tmpdir(), "patchbay-faults-"));
      tempDirs.push(dir);
      return dir;
    };
    servers = await Promise.all([
      spawnServer({ env: env(await dataDir()) }),
      spawnServer({ env: env(await dataDir()) }),
    ]);
    for (const s of servers) void s.exited.then(() => dead.add(s));
    tenant = JSON.parse(await runPatchbay(["admin", "bootstrap", "--json"], env(await dataDir()))) as Tenant;
    const res = await fetch(
      `${servers[0]?.baseUrl}/api/v1/environments/${tenant.environmentId}/publishable-keys`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${tenant.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "faults" }),
      },
    );
    expect(res.status).toBe(201);
    publishableKey = ((await res.json()) as { key: string }).key;
  }, 120_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await sql?.end({ timeout: 1 });
    await proxy?.close();
    await cluster?.destroy();
    await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  const dead = new Set<SpawnedServer>();
  const crashes = () => dead.size;
  const serverLogs = () =>
    servers.map((s) => `--- ${s.baseUrl} ---\n${s.output().slice(-20_000)}`).join("\n");

  /** Polls every instance until `ok` holds for all; the time it took. */
  const until = async (ok: (s: SpawnedServer) => Promise<boolean>, timeoutMs: number) => {
    const started = Date.now();
    while (Date.now() - started < timeoutMs) {
      const all = await Promise.all(servers.map((s) => ok(s).catch(() => false)));
      if (all.every(Boolean)) return Date.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return undefined;
  };
  const readyz = async (s: SpawnedServer, status: number) => {
    // The bound plus a little for a busy machine's scheduling.
    const res = await fetch(`${s.baseUrl}/readyz`, { signal: AbortSignal.timeout(READYZ_BOUND_MS + 500) });
    await res.arrayBuffer();
    return res.status === status && (status === 200 || res.headers.get("retry-after") !== null);
  };
  const serving = async (s: SpawnedServer) => {
    const res = await fetch(`${s.baseUrl}/api/v1/me`, {
      headers: { authorization: `Bearer ${tenant.apiKey}` },
      signal: AbortSignal.timeout(RECOVERY_BOUND_MS),
    });
    await res.arrayBuffer();
    return res.status === 200 && (await readyz(s, 200));
  };

  /**
   * Runs traffic, lets some of it succeed, applies `fault` (which resolves once the database is
   * back, or the fault is over), waits for recovery, lets traffic run on, then checks the goals.
   */
  async function scenario(
    name: string,
    fault: (during: { readyzFlip(): Promise<number | undefined> }) => Promise<void>,
    goals: { outageAnswers: boolean; hangBoundMs?: number } = { outageAnswers: true },
  ): Promise<void> {
    const traffic: Traffic = startTraffic(servers, { apiKey: tenant.apiKey, publishableKey });
    let readyzFlipMs: number | undefined;
    let recoveryMs: number | undefined;
    try {
      // Warm: every kind has succeeded at least once.
      await until(async () => traffic.ackedTraces.size > 0 && traffic.ackedWrites.size > 0, 30_000);
      await fault({
        readyzFlip: async () => {
          readyzFlipMs = await until((s) => readyz(s, 503), 10_000);
          return readyzFlipMs;
        },
      });
      recoveryMs = await until(serving, 60_000);
      // Let retries drain: every write acknowledged or still trying, then a little more traffic.
      const seen = traffic.outcomes.length;
      await until(async () => traffic.outcomes.length > seen + 50, 30_000);
    } finally {
      await traffic.stop();
    }
    const stored = await storedOf(sql, tenant.environmentId, traffic);
    const report: Report = {
      scenario: name,
      hangBoundMs: goals.hangBoundMs ?? HANG_BOUND_MS,
      outcomes: traffic.outcomes,
      recoveryMs,
      readyzFlipMs,
      acked: { traces: traffic.ackedTraces.size, writes: traffic.ackedWrites.size },
      stored,
      crashes: crashes(),
    };
    printReport(report);

    const context = `${name}\n${serverLogs()}`;
    expect(report.crashes, context).toBe(0);
    expect(serverLogs(), "an unhandled rejection was logged").not.toContain("unhandled promise rejection");
    expect(
      traffic.outcomes.filter((o) => o.ms > report.hangBoundMs),
      context,
    ).toEqual([]);
    expect(
      traffic.outcomes.filter((o) => o.status === 500 || o.status === "network"),
      context,
    ).toEqual([]);
    expect(stored.traces, context).toBe(report.acked.traces);
    expect(stored.writes, context).toBe(report.acked.writes);
    expect(stored.duplicateWrites, context).toBe(0);
    expect(recoveryMs, context).toBeDefined();
    expect(recoveryMs ?? Number.POSITIVE_INFINITY, context).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
    if (goals.outageAnswers) {
      const refused = traffic.outcomes.filter((o) => o.status === 503).length;
      expect(refused, `${context}\nno 503 was seen: the fault did not bite`).toBeGreaterThan(0);
    }
  }

  test("stop -m fast for the outage, then start", async () => {
    await scenario(`database stopped for ${OUTAGE_MS / 1000} s`, async ({ readyzFlip }) => {
      await cluster.stop();
      try {
        const flip = await readyzFlip();
        expect(flip, "/readyz kept answering 200 with the database stopped").toBeDefined();
        await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      } finally {
        await cluster.start();
      }
    });
  }, 240_000);

  test("kill -9 of the postmaster, then start", async () => {
    await scenario("postmaster killed", async ({ readyzFlip }) => {
      await cluster.killPostmaster();
      try {
        expect(await readyzFlip(), "/readyz kept answering 200 with the postmaster dead").toBeDefined();
      } finally {
        await cluster.start();
      }
    });
  }, 240_000);

  test("every connection cut by the network", async () => {
    await scenario(
      "every connection cut",
      async () => {
        // Waves of cuts at uneven intervals, each followed by a second cut once the pools have
        // reconnected: queries land in every phase of a connection's loss and return (one handed
        // to a connection whose socket had failed but not yet closed hung for good once).
        for (let wave = 0; wave < CUT_WAVES; wave++) {
          proxy.cutAll();
          await until(async () => proxy.connections > 0, 10_000);
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 30));
          proxy.cutAll();
          await new Promise((resolve) => setTimeout(resolve, 500 + Math.random() * 1_000));
        }
      },
      { outageAnswers: false },
    );
  }, 240_000);

  test("500 ms of latency on every database round trip", async () => {
    await scenario(
      "500 ms database latency",
      async () => {
        proxy.setLatency(250); // each way: 500 ms per round trip
        try {
          const started = Date.now();
          // Ten seconds of slow database under load.
          await until(async () => Date.now() - started > 10_000, 20_000);
        } finally {
          proxy.setLatency(0);
        }
      },
      // Not an outage: a write's dozen round trips take seconds, and none may fail.
      { outageAnswers: false, hangBoundMs: 15_000 },
    );
  }, 240_000);
});
