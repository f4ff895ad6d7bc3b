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
 * Floor, in the same rounds: a bare paid call on the same SDK resource server, facilitator and
 * table, without the gate — verify with the claim beside it (a committed INSERT, so a payment's
 * handler never runs twice), the handler's query, settle on chain, write the answer (a committed
 * UPDATE, its body sealed while settlement is in flight, as the gate does). The answer (what a
 * replay gets) is the commit a paid call cannot do without between settlement and its response:
 * it is the floor patchbay's overhead is set against. It is timed inside that bare call, after a
 * real settlement, because a statement on a connection that has waited for the chain costs more
 * than one sent right after another (the database backend and this process wake up again).
 *
 * Also printed: the CPU used during the rounds by this process, PostgreSQL, anvil and everything
 * else on the machine (% of one core); other work on a 2-core machine inflates every hand-off.
 *
 * Env: BENCH_PAID (calls per round, default 40), BENCH_ROUNDS (5), BENCH_PG_URL (admin URL,
 * default postgres://postgres@127.0.0.1:5432/postgres; `pglite` for the embedded engine).
 */
import { availableParallelism, cpus } from "node:os";
import { performance } from "node:perf_hooks";
import { x402HTTPClient } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { eq } from "drizzle-orm";
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
import { readPaymentIdentity } from "../src/transports/x402/payment-identity.ts";
import { claimPayment } from "../src/transports/x402/payment-lock.ts";
import { agentClient, startTestChain } from "../test/lib/dev-chain.ts";
import { cpuSecondsOf, machineCpuSeconds, postgresCpuSeconds } from "./lib/processes.ts";
import { quantile } from "./lib/stats.ts";

const perRound = Number(process.env.BENCH_PAID ?? 40);
/** Goal: patchbay's own share of a paid call, medians (docs/performance.md). */
const GOAL_OVERHEAD_SHARE = 0.1;
/** Above this much CPU (% of one core) used by unrelated processes during the rounds, the figures are suspect. */
const NOISY_OTHER_CPU = 25;
/** A paid call apart from verify and settle, by where it is (their sum − free = the overhead). */
type Split = "beforeVerify" | "toHandler" | "handler" | "toSettle" | "answer";
const SPLITS: [Split, string][] = [
  ["beforeVerify", "in: gate → verify starts"],
  ["toHandler", "verify → handler"],
  ["handler", "handler (as in free)"],
  ["toSettle", "handler → settle starts"],
  ["answer", "settle → out (answer write)"],
];
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

  // verify/settle timing through the SDK's hooks, and the handler's own span, as instants on one
  // clock (calls are sequential: one open slot each). Where the rest of a paid call goes follows.
  const at = {
    start: 0,
    verifyStart: 0,
    verifyEnd: 0,
    handlerStart: 0,
    handlerEnd: 0,
    settleStart: 0,
    settleEnd: 0,
  };
  const server = chain.payments.resourceServer;
  server.onBeforeVerify(async () => {
    at.verifyStart = performance.now();
  });
  server.onAfterVerify(async () => {
    at.verifyEnd = performance.now();
  });
  server.onBeforeSettle(async () => {
    at.settleStart = performance.now();
  });
  server.onAfterSettle(async () => {
    at.settleEnd = performance.now();
  });

  const handler = async (c: import("hono").Context<AppEnv>) => {
    at.handlerStart = performance.now();
    const [row] = await db.select().from(environments).where(eq(environments.id, envId));
    if (!row) throw new AppError("not_found", "gone");
    const res = c.json({ id: row.id, name: row.name, revision: row.revision });
    at.handlerEnd = performance.now();
    return res;
  };
  const keyring = parseKeyring(generateKek(1));
  const app = new Hono<AppEnv>();
  app.onError(handleError);
  app.use("*", requestId());
  app.use(
    "/x402/*",
    paymentGate({
      payments: chain.payments,
      routes: { "GET /x402/bench": { price: "read", description: "bench read" } },
      db,
      keyring,
      logger: createLogger({ level: "silent" }),
      baseUrl: "http://bench.local",
    }),
  );
  app.get("/x402/bench", handler);
  app.get("/x402/bench-free", handler);
  const url = "http://bench.local/x402/bench";
  const call = async (path: string, headers: Record<string, string> = {}) => {
    const started = performance.now();
    at.start = started;
    const res = await app.fetch(new Request(`http://bench.local${path}`, { headers }));
    await res.arrayBuffer();
    return { ms: performance.now() - started, status: res.status };
  };

  const payer = await chain.fundedPayer(12, "100");
  const client = new x402HTTPClient(agentClient(chain.payments, payer.privateKey as Hex));
  const challenge = await app.fetch(new Request(url));
  const required = decodePaymentRequiredHeader(challenge.headers.get("payment-required") ?? "");
  const sign = () => client.createPaymentPayload(required);
  const header = (payload: PaymentPayload) =>
    client.encodePaymentSignatureHeader(payload)["PAYMENT-SIGNATURE"] ?? "";

  // Warm-up: JIT, connection pools, the resource server's first initialize.
  for (let i = 0; i < 20; i++) {
    await call("/x402/bench-free");
    await call("/x402/bench");
  }
  for (let i = 0; i < 3; i++) await call("/x402/bench", { "payment-signature": header(await sign()) });

  // The bare paid call: the same SDK calls and the lock's statements, none of the gate's own work.
  const answer = { status: 200, headers: { "content-type": "application/json" }, body: '{"id":"…"}' };
  const barePaid = async (payment: PaymentPayload) => {
    const requirements = payment.accepted;
    // The lock key as the gate derives it; read before the clock starts (the gate's own work).
    const read = readPaymentIdentity(header(payment));
    if (!read.ok) throw new Error(`the bare call's payment is unreadable: ${read.problem}`);
    const { key, paymentHash } = read.identity;
    const lock = { db, keyring, key };
    const started = performance.now();
    const verifying = server.verifyPayment(payment, requirements);
    const now = new Date();
    const claiming = claimPayment(
      lock,
      {
        paymentHash,
        requestHash: paymentHash,
        route: "GET /x402/bench",
        amount: requirements.amount,
        expiresAt: new Date(now.getTime() + 86_400_000),
      },
      now,
    ).then((claim) => ({ claim, ms: performance.now() - started }));
    const verified = await verifying;
    const { claim, ms: claimed } = await claiming;
    if (!verified.isValid) throw new Error("the bare call's payment did not verify");
    if (!claim) throw new Error("the bare call's payment could not be claimed");
    await db.select().from(environments).where(eq(environments.id, envId));
    claim.prepare(answer.body);
    const settled = await server.settlePayment(payment, requirements);
    if (!settled.success) throw new Error("the bare call's payment did not settle");
    const t = performance.now();
    await claim.settled(settled.transaction, answer, requirements);
    const end = performance.now();
    return { claim: claimed, answer: end - t, total: end - started };
  };
  for (let i = 0; i < 3; i++) await barePaid(await sign());

  const free: number[] = [];
  const floor: { claim: number; answer: number; total: number }[] = [];
  const unpaid: number[] = [];
  const paid: { total: number; verify: number; settle: number; split: Record<Split, number> }[] = [];
  const before = await chain.balanceOf(payer.address);
  const cpu = cpuWindow();
  // Each round makes its paid calls, then as many bare ones: each kind of call follows its own
  // kind, so the database sees the same pattern of commits under both.
  for (let round = 0; round < rounds; round++) {
    const payments = await Promise.all(Array.from({ length: 2 * perRound }, sign));
    for (const payment of payments.slice(0, perRound)) {
      const f = await call("/x402/bench-free");
      const u = await call("/x402/bench");
      const p = await call("/x402/bench", { "payment-signature": header(payment) });
      if (f.status !== 200 || u.status !== 402 || p.status !== 200)
        throw new Error(`unexpected statuses ${f.status}/${u.status}/${p.status}`);
      free.push(f.ms);
      unpaid.push(u.ms);
      paid.push({
        total: p.ms,
        verify: at.verifyEnd - at.verifyStart,
        settle: at.settleEnd - at.settleStart,
        split: {
          beforeVerify: at.verifyStart - at.start,
          toHandler: at.handlerStart - at.verifyEnd,
          handler: at.handlerEnd - at.handlerStart,
          toSettle: at.settleStart - at.handlerEnd,
          answer: at.start + p.ms - at.settleEnd,
        },
      });
    }
    for (const payment of payments.slice(perRound)) floor.push(await barePaid(payment));
  }
  const cpuPercent = cpu.end();
  const moved = before - (await chain.balanceOf(payer.address));
  const expected = BigInt(paid.length + floor.length) * 10_000n;
  if (moved !== expected) throw new Error(`moved ${moved}, expected ${expected}`);

  const freeMedian = quantile(free, 0.5);
  const overhead = paid.map((p) => p.total - p.verify - p.settle - freeMedian);
  const commits = floor.map((f) => f.answer);
  const rows: [string, number[]][] = [
    ["free (same route, no gate)", free],
    ["402 challenge (unpaid)", unpaid],
    ["paid (total)", paid.map((p) => p.total)],
    ["  facilitator verify", paid.map((p) => p.verify)],
    ["  facilitator settle (on chain)", paid.map((p) => p.settle)],
    ["  patchbay overhead", overhead],
    ...SPLITS.map(([split, label]): [string, number[]] => [`    ${label}`, paid.map((p) => p.split[split])]),
    ["bare paid call (no gate)", floor.map((f) => f.total)],
    ["floor: claim, beside verify", floor.map((f) => f.claim)],
    ["floor: answer (committed UPDATE)", commits],
  ];
  console.log(
    `\nbench:x402 — ${paid.length} paid calls, ${database.url ? "PostgreSQL" : "PGlite"}, anvil dev chain, in-process facilitator; ${availableParallelism()} × ${cpus()[0]?.model ?? "unknown CPU"}, node ${process.version}`,
  );
  console.log(`${"".padEnd(34)}${["p50 ms", "p95 ms", "mean ms"].map((h) => h.padStart(10)).join("")}`);
  for (const [name, values] of rows) {
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    console.log(
      `${name.padEnd(34)}${[quantile(values, 0.5), quantile(values, 0.95), mean].map((v) => v.toFixed(2).padStart(10)).join("")}`,
    );
  }
  const paidMedian = quantile(
    paid.map((p) => p.total),
    0.5,
  );
  const overheadMedian = quantile(overhead, 0.5);
  const floorMedian = quantile(commits, 0.5);
  const share = overheadMedian / paidMedian;
  const pct = (ms: number) => `${((100 * ms) / paidMedian).toFixed(1)} %`;
  console.log(
    `\npatchbay overhead ${overheadMedian.toFixed(2)} ms = ${pct(overheadMedian)} of the paid call's median ${paidMedian.toFixed(2)} ms — goal ≤ ${100 * GOAL_OVERHEAD_SHARE} %: ${share <= GOAL_OVERHEAD_SHARE ? "met" : "NOT met"}`,
  );
  console.log(
    `floor (the answer's commit, median) ${floorMedian.toFixed(2)} ms = ${pct(floorMedian)}; overhead beyond the floor ${(overheadMedian - floorMedian).toFixed(2)} ms (${pct(overheadMedian - floorMedian)}); the claim (${quantile(
      floor.map((f) => f.claim),
      0.5,
    ).toFixed(2)} ms from the call's start) commits beside verify`,
  );
  const cpuText = (v: number | null) => (v === null ? "n/a" : `${v.toFixed(0)} %`);
  console.log(
    `CPU during the rounds (% of one core): bench ${cpuText(cpuPercent.bench)}, PostgreSQL ${cpuText(cpuPercent.postgres)}, anvil ${cpuText(cpuPercent.anvil)}, other processes ${cpuText(cpuPercent.other)}`,
  );
  if ((cpuPercent.other ?? 0) > NOISY_OTHER_CPU)
    console.log(
      `WARNING: other processes used more than ${NOISY_OTHER_CPU} % of a core during the rounds: every database round trip and facilitator call then waits to be scheduled. Compare quiet runs only.`,
    );
  console.log(
    `\nmoved on chain: ${Number(moved) / 1e6} USDC for ${paid.length} paid and ${floor.length} bare calls (exactly the price each)`,
  );
} finally {
  await chain.close();
  await database.drop();
}

/** CPU used from now until `end()` (% of one core): this process, PostgreSQL, anvil, the rest. */
function cpuWindow() {
  const wall = performance.now();
  const self = process.cpuUsage();
  const pg = postgresCpuSeconds();
  const anvil = cpuSecondsOf("anvil");
  const machine = machineCpuSeconds();
  return {
    end() {
      const seconds = (performance.now() - wall) / 1000;
      const own = process.cpuUsage(self);
      const bench = (own.user + own.system) / 1e6;
      const pgNow = postgresCpuSeconds();
      const anvilNow = cpuSecondsOf("anvil");
      const machineNow = machineCpuSeconds();
      const pgUsed = pg !== null && pgNow !== null ? pgNow - pg : null;
      const anvilUsed = anvil !== null && anvilNow !== null ? anvilNow - anvil : null;
      const other =
        machine && machineNow && pgUsed !== null && anvilUsed !== null
          ? Math.max(0, machineNow.busy - machine.busy - bench - pgUsed - anvilUsed)
          : null;
      const pct = (used: number | null) => (used === null ? null : (100 * used) / seconds);
      return { bench: pct(bench), postgres: pct(pgUsed), anvil: pct(anvilUsed), other: pct(other) };
    },
  };
}
