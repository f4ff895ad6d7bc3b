/**
 * `npm run bench:x402`: one paid x402 call next to the same route unpaid, in one run, and
 * patchbay's own share of the paid call apart from the facilitator's verify and settle.
 *
 * In one process (the dev chain's anvil runs beside it, as with `npm start`): a route that reads
 * an environment from the database, mounted twice on the same middleware stack — once free, once
 * behind the payment gate (the real SDK resource server, the in-process facilitator, the
 * `x402_payments` lock on PostgreSQL). Measured one call at a time, in interleaved rounds:
 *
 * - `free`: the route without the gate;
 * - `402`: the gated route called without payment (the challenge);
 * - `paid`: the gated route with a fresh signed payment (verify → lock → handler → settle on chain).
 *
 * `verify` and `settle` are timed with the SDK's resource-server hooks around the facilitator;
 * patchbay's overhead per paid call = paid − verify − settle − free (median of free).
 * Payments are signed before the clock starts: signing is the client's cost.
 *
 * Floor, in the same rounds: the two commits a paid call cannot do without — claiming the payment
 * (so its handler never runs twice) and storing the settled answer (what a replay gets) — as a
 * committed single-row INSERT and a committed UPDATE of that row, on the same database.
 *
 * Env: BENCH_PAID (calls per round, default 40), BENCH_ROUNDS (5), BENCH_PG_URL (admin URL,
 * default postgres://postgres@127.0.0.1:5432/postgres; `pglite` for the embedded engine).
 */
import { performance } from "node:perf_hooks";
import { x402HTTPClient } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { eq, sql } from "drizzle-orm";
import { Hono } from "hono";
import type { Hex } from "viem";
import { AppError } from "../src/errors.ts";
import { newUuid } from "../src/ids.ts";
import { environments } from "../src/platform/db/schema/environments.ts";
import { organizations } from "../src/platform/db/schema/organizations.ts";
import { createLogger } from "../src/platform/logging/logger.ts";
import { generateKek, parseKeyring } from "../src/platform/vault/keyring.ts";
import type { AppEnv } from "../src/transports/http/env.ts";
import { handleError } from "../src/transports/http/problem.ts";
import { requestId } from "../src/transports/http/request-id.ts";
import { paymentGate } from "../src/transports/x402/payment-gate.ts";
import { agentClient, startTestChain } from "../test/lib/dev-chain.ts";

const perRound = Number(process.env.BENCH_PAID ?? 40);
/** Goal: patchbay's own share of a paid call, medians (docs/performance.md). */
const GOAL_OVERHEAD_SHARE = 0.1;
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const pgUrl = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
if (pgUrl !== "pglite") process.env.PATCHBAY_TEST_PG = pgUrl;
else delete process.env.PATCHBAY_TEST_PG;
const { createTestDatabase } = await import("../test/database.ts");

const database = await createTestDatabase();
const chain = await startTestChain();
const db = database.handle.db;
try {
  const orgId = "org_bench";
  const envId = newUuid();
  await db.insert(organizations).values({ id: orgId, name: "bench" });
  await db.insert(environments).values({ id: envId, organizationId: orgId, name: "production" });

  // verify/settle timing through the SDK's hooks (calls are sequential: one open slot each).
  const timing = { verifyStart: 0, settleStart: 0, verify: 0, settle: 0 };
  const server = chain.payments.resourceServer;
  server.onBeforeVerify(async () => {
    timing.verifyStart = performance.now();
  });
  server.onAfterVerify(async () => {
    timing.verify = performance.now() - timing.verifyStart;
  });
  server.onBeforeSettle(async () => {
    timing.settleStart = performance.now();
  });
  server.onAfterSettle(async () => {
    timing.settle = performance.now() - timing.settleStart;
  });

  const handler = async (c: import("hono").Context<AppEnv>) => {
    const [row] = await db.select().from(environments).where(eq(environments.id, envId));
    if (!row) throw new AppError("not_found", "gone");
    return c.json({ id: row.id, name: row.name, revision: row.revision });
  };
  const app = new Hono<AppEnv>();
  app.onError(handleError);
  app.use("*", requestId());
  app.use(
    "/x402/*",
    paymentGate({
      payments: chain.payments,
      routes: { "GET /x402/bench": { price: "read", description: "bench read" } },
      db,
      keyring: parseKeyring(generateKek(1)),
      logger: createLogger({ level: "silent" }),
      baseUrl: "http://bench.local",
    }),
  );
  app.get("/x402/bench", handler);
  app.get("/x402/bench-free", handler);
  const url = "http://bench.local/x402/bench";
  const call = async (path: string, headers: Record<string, string> = {}) => {
    const started = performance.now();
    const res = await app.fetch(new Request(`http://bench.local${path}`, { headers }));
    await res.arrayBuffer();
    return { ms: performance.now() - started, status: res.status };
  };

  const payer = await chain.fundedPayer(12, "100");
  const client = new x402HTTPClient(agentClient(chain.payments, payer.privateKey as Hex));
  const challenge = await app.fetch(new Request(url));
  const required = decodePaymentRequiredHeader(challenge.headers.get("payment-required") ?? "");
  const sign = async () =>
    client.encodePaymentSignatureHeader(await client.createPaymentPayload(required))["PAYMENT-SIGNATURE"] ??
    "";

  // Warm-up: JIT, connection pools, the resource server's first initialize.
  for (let i = 0; i < 20; i++) {
    await call("/x402/bench-free");
    await call("/x402/bench");
  }
  for (let i = 0; i < 3; i++) await call("/x402/bench", { "payment-signature": await sign() });

  await db.execute(sql`create table bench_x402_floor (id text primary key, answer text)`);
  const floorWrites = async () => {
    const id = newUuid();
    const started = performance.now();
    await db.execute(sql`insert into bench_x402_floor (id) values (${id})`);
    await db.execute(sql`update bench_x402_floor set answer = ${"{}"} where id = ${id}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 20; i++) await floorWrites();

  const free: number[] = [];
  const floor: number[] = [];
  const unpaid: number[] = [];
  const paid: { total: number; verify: number; settle: number }[] = [];
  const before = await chain.balanceOf(payer.address);
  for (let round = 0; round < rounds; round++) {
    const payments = await Promise.all(Array.from({ length: perRound }, sign));
    for (const payment of payments) {
      const f = await call("/x402/bench-free");
      floor.push(await floorWrites());
      const u = await call("/x402/bench");
      timing.verify = timing.settle = 0;
      const p = await call("/x402/bench", { "payment-signature": payment });
      if (f.status !== 200 || u.status !== 402 || p.status !== 200)
        throw new Error(`unexpected statuses ${f.status}/${u.status}/${p.status}`);
      free.push(f.ms);
      unpaid.push(u.ms);
      paid.push({ total: p.ms, verify: timing.verify, settle: timing.settle });
    }
  }
  const moved = before - (await chain.balanceOf(payer.address));
  const expected = BigInt(paid.length) * 10_000n;
  if (moved !== expected) throw new Error(`moved ${moved}, expected ${expected}`);

  const freeMedian = quantile(free, 0.5);
  const overhead = paid.map((p) => p.total - p.verify - p.settle - freeMedian);
  const rows: [string, number[]][] = [
    ["free (same route, no gate)", free],
    ["402 challenge (unpaid)", unpaid],
    ["paid (total)", paid.map((p) => p.total)],
    ["  facilitator verify", paid.map((p) => p.verify)],
    ["  facilitator settle (on chain)", paid.map((p) => p.settle)],
    ["  patchbay overhead", overhead],
    ["  floor: 2 committed writes", floor],
  ];
  console.log(
    `\nbench:x402 — ${paid.length} paid calls, ${database.url ? "PostgreSQL" : "PGlite"}, anvil dev chain, in-process facilitator`,
  );
  console.log(`${"".padEnd(34)}${["p50 ms", "p95 ms", "mean ms"].map((h) => h.padStart(10)).join("")}`);
  for (const [name, values] of rows) {
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    console.log(
      `${name.padEnd(34)}${[quantile(values, 0.5), quantile(values, 0.95), mean].map((v) => v.toFixed(2).padStart(10)).join("")}`,
    );
  }
  const share =
    quantile(overhead, 0.5) /
    quantile(
      paid.map((p) => p.total),
      0.5,
    );
  console.log(
    `\npatchbay overhead / paid call (medians): ${(100 * share).toFixed(1)} % — goal ≤ ${100 * GOAL_OVERHEAD_SHARE} %: ${share <= GOAL_OVERHEAD_SHARE ? "met" : "NOT met"}`,
  );
  const floorShare =
    quantile(floor, 0.5) /
    quantile(
      paid.map((p) => p.total),
      0.5,
    );
  console.log(
    `the floor alone (the claim's and the answer's commits): ${(100 * floorShare).toFixed(1)} % of the paid call; patchbay overhead / floor: ${(quantile(overhead, 0.5) / quantile(floor, 0.5)).toFixed(2)}×`,
  );
  console.log(
    `\nmoved on chain: ${Number(moved) / 1e6} USDC for ${paid.length} calls (exactly the price each)`,
  );
} finally {
  await chain.close();
  await database.drop();
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}
