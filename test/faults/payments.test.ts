import { formatUnits } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { generateKek } from "../../src/platform/vault/keyring.ts";
import type { DevChainControl } from "./lib/dev-chain-control.ts";
import { type PaidInstance, paymentKey, startPaidInstance } from "./lib/paid-instance.ts";
import {
  type CallKind,
  type PaidCall,
  resend,
  type SentPayment,
  startPayingAgents,
} from "./lib/paying-agents.ts";
import { type PgCluster, startPgCluster } from "./lib/pg-cluster.ts";

/**
 * The dev chain going away while agents pay: a real `patchbay serve` with its own local chain
 * (anvil on a port of its own, in development mode as `npm start` runs it), on a PostgreSQL
 * cluster of the suite's own, and agents paying with the official client — each signs up (a paid
 * write), then reads problems and starts onboarding sessions (a paid write). The test freezes or
 * kills anvil mid-traffic, brings it back with the same state, and holds every answer the agents
 * got against the chain (each authorization's state, each payer's balance) and patchbay's
 * payments table:
 *
 * - a 2xx was charged exactly once; a refusal was not charged, unless its answer is held for the
 *   same payment (then sending it again delivers the answer, charged once);
 * - every refusal has a code, every 503 a Retry-After; no 500; no call past the bound;
 * - every payment sent again after the chain's return: a settled one is replayed, not charged again
 *   and not run again;
 * - paid calls succeed again within a few seconds of the chain's return, without a restart.
 */

/**
 * How long the chain stays frozen or dead. A freeze must outlast the facilitator's bound on an
 * unanswered request (about 8 s) to refuse anything.
 */
const OUTAGE_MS = Number(process.env.PATCHBAY_FAULTS_CHAIN_OUTAGE_SECONDS ?? 20) * 1000;
/** A paid call (challenge, verify, handler, settle) answers within this, chain or no chain. */
const PAID_BOUND_MS = 15_000;
/** Paid calls succeed again within this after the chain is back. */
const RECOVERY_BOUND_MS = 5_000;

/** A call that sent a payment. */
type Paid = PaidCall & { payment: SentPayment };

const ok = (c: PaidCall) => typeof c.status === "number" && c.status >= 200 && c.status < 300;
const usd = (atomic: bigint) => `$${formatUnits(atomic, 6)}`;
const sum = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);

describe("the dev chain going away during paid calls", () => {
  let cluster: PgCluster;
  const kek = generateKek();

  beforeAll(async () => {
    cluster = await startPgCluster();
  }, 60_000);

  afterAll(async () => {
    await cluster?.destroy();
  });

  /** Its own instance, chain (and port), database and payers, then the run. */
  async function scenario(
    name: string,
    payerIndexes: number[],
    fault: (chain: DevChainControl) => Promise<void>,
  ): Promise<void> {
    const instance = await startPaidInstance({
      cluster,
      database: `payments_${payerIndexes[0]}`,
      kek,
      payerIndexes,
    });
    try {
      await runScenario(name, instance, fault);
    } finally {
      await instance.close();
    }
  }

  test("anvil frozen (SIGSTOP), then thawed", async () => {
    await scenario(`dev chain frozen (SIGSTOP) for ${OUTAGE_MS / 1000} s`, [10, 11, 12], async (chain) => {
      chain.freeze();
      try {
        await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      } finally {
        chain.thaw();
      }
    });
  }, 150_000);

  test("anvil killed (SIGKILL), then restarted with its state", async () => {
    await scenario(
      `dev chain killed (SIGKILL), back after ${OUTAGE_MS / 1000} s with its state`,
      [13, 14, 15],
      async (chain) => {
        await chain.kill();
        await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
        await chain.restart();
      },
    );
  }, 150_000);
});

/** Polls `probe` until it holds; the time it took, or undefined after `timeoutMs`. */
async function until(
  probe: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<number | undefined> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (await probe()) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return undefined;
}

async function runScenario(
  name: string,
  instance: PaidInstance,
  fault: (chain: DevChainControl) => Promise<void>,
): Promise<void> {
  const { server, chain, agentChain, payers } = instance;
  const funded = await instance.balances();

  const agents = startPayingAgents({
    baseUrl: server.baseUrl,
    chain: agentChain,
    payers: payers.map((p) => p.privateKey),
  });
  const calls = agents.calls;
  let faultAt = 0;
  let returnedAt = 0;
  let recoveryMs: number | undefined;
  try {
    // Warm: every agent signed up and some reads and onboardings went through.
    const warm = await until(
      () =>
        new Set(calls.filter((c) => c.kind === "signup" && ok(c)).map((c) => c.agent)).size ===
          payers.length && calls.filter((c) => c.kind === "onboard" && ok(c)).length >= 2,
      60_000,
    );
    expect(
      warm,
      `the agents never got going: ${byKind(calls)}; ${byCode(calls.filter((c) => !ok(c)))}\n${server.output()}`,
    ).toBeDefined();
    faultAt = Date.now();
    await fault(chain);
    returnedAt = Date.now();
    const back = (c: PaidCall) => c.at >= returnedAt && ok(c);
    await until(() => calls.some(back), 30_000);
    const first = calls.filter(back).sort((a, b) => a.at + a.ms - (b.at + b.ms))[0];
    recoveryMs = first ? first.at + first.ms - returnedAt : undefined;
    // Some traffic after the return, so a service that recovered once and fell over shows.
    await until(() => calls.filter(back).length >= 6, 30_000);
  } finally {
    await agents.stop();
  }

  // Settlements broadcast before the thaw may still land: wait until no claim is open.
  await instance.claimsClosed(PAID_BOUND_MS);
  const paid = calls.filter((c): c is Paid => c.payment !== undefined);
  const payments = paid.map((c) => c.payment);

  // The answers against the chain and the table, before anything is sent again.
  const usedAtFirst = await instance.authorizationsUsed(payments);
  const rowsAtFirst = await instance.paymentRows();
  const charged = (c: Paid) => usedAtFirst.get(paymentKey(c.payment)) === true;
  const held = (c: Paid) => rowsAtFirst.get(paymentKey(c.payment))?.state === "failed";
  const answered = paid.filter(ok);
  const refused = calls.filter((c) => !ok(c));
  const paidRefused = paid.filter((c) => !ok(c));
  const unpaidAnswers = answered.filter((c) => !charged(c));
  const wrongReceipts = answered.filter((c) => {
    const row = rowsAtFirst.get(paymentKey(c.payment));
    return row?.state !== "settled" || row.transaction?.toLowerCase() !== c.transaction?.toLowerCase();
  });
  const chargedWithoutAnswer = paidRefused.filter((c) => charged(c) && !held(c));
  const chargedHeld = paidRefused.filter((c) => charged(c) && held(c));

  // Every payment sent again, verbatim, now the chain is back.
  const beforeResends = await instance.balances();
  const retries: { original: Paid; again: PaidCall }[] = [];
  for (const original of paid) retries.push({ original, again: await resend(original) });
  const notReplayed = retries.filter(
    ({ original, again }) => ok(original) && (again.status !== original.status || !again.replayed),
  );
  const heldNotDelivered = retries.filter(({ original, again }) => held(original) && !ok(again));
  const heldCount = paidRefused.filter(held).length;

  // The totals: what each payer spent is exactly the authorizations used, and every used one
  // bought an answer the agent received (first time, or on sending the same payment again).
  await instance.claimsClosed(PAID_BOUND_MS);
  const usedAtEnd = await instance.authorizationsUsed(payments);
  const rowsAtEnd = await instance.paymentRows();
  const after = await instance.balances();
  const delivered = new Set(
    [...answered, ...retries.filter((r) => ok(r.again)).map((r) => r.again)].flatMap((c) =>
      c.payment ? [paymentKey(c.payment)] : [],
    ),
  );
  const usedKeys = [...usedAtEnd].filter(([, isUsed]) => isUsed).map(([key]) => key);
  const paidForNothing = usedKeys.filter((key) => !delivered.has(key));
  const deliveredUnpaid = [...delivered].filter((key) => usedAtEnd.get(key) !== true);
  const spent = payers.map((_, i) => (funded[i] ?? 0n) - (after[i] ?? 0n));
  const owed = payers.map((p) =>
    paid
      .filter((c) => c.payment.payer.toLowerCase() === p.address.toLowerCase())
      .filter((c) => usedAtEnd.get(paymentKey(c.payment)) === true)
      .reduce((total, c) => total + c.payment.value, 0n),
  );
  const settledRows = [...rowsAtEnd.values()].filter((r) => r.state === "settled");
  const openRows = [...rowsAtEnd.values()].filter((r) => r.state !== "settled");
  const sessions = await instance.onboardingSessions();
  const settledOnboardings = settledRows.filter((r) => r.route === "POST /x402/onboard").length;

  const during = calls.filter((c) => c.at <= returnedAt && c.at + c.ms >= faultAt);
  const slowest = Math.max(0, ...calls.map((c) => c.ms), ...retries.map((r) => r.again.ms));
  const overBound = [...calls, ...retries.map((r) => r.again)].filter((c) => c.ms > PAID_BOUND_MS);
  // 503 is a refusal (checked for its Retry-After below); any other 5xx, or no answer, is a fault.
  const serverErrors = [...calls, ...retries.map((r) => r.again)].filter(
    (c) => c.status === "network" || (c.status >= 500 && c.status !== 503),
  );
  const without503RetryAfter = refused.filter((c) => c.status === 503 && c.retryAfter === null);
  const withoutCode = refused.filter((c) => typeof c.status === "number" && c.code === undefined);

  console.log(
    [
      `── ${name} ──`,
      `  paid calls           ${byKind(calls)}`,
      `  while the chain was away (${during.length} calls) ${byKind(during)}`,
      `  refusals             ${byCode(refused)}; 503 without Retry-After: ${without503RetryAfter.length}; without a code: ${withoutCode.length}`,
      `  slowest              ${slowest} ms (bound ${PAID_BOUND_MS} ms); over the bound: ${overBound.length}; 500 or no answer: ${serverErrors.length}`,
      `  2xx                  ${answered.length}: charged once on chain ${answered.length - unpaidAnswers.length}, settled row with the receipt's transaction ${answered.length - wrongReceipts.length}`,
      `  refused after paying ${paidRefused.length}: not charged ${paidRefused.length - chargedWithoutAnswer.length - chargedHeld.length}, charged with the answer held ${chargedHeld.length}, charged without an answer ${chargedWithoutAnswer.length}`,
      `  same payment again   ${retries.length}: ${byKind(retries.map((r) => r.again))}; settled ones replayed ${retries.filter((r) => ok(r.original) && r.again.replayed).length}/${answered.length}; held ones delivered ${heldCount - heldNotDelivered.length}/${heldCount}`,
      `  on chain             spent ${usd(sum(spent))} (${usd(sum(funded) - sum(beforeResends))} before the resends) = used authorizations ${usd(sum(owed))} (${usedKeys.length}); settled rows ${settledRows.length}; rows left held or in flight ${openRows.length}`,
      `  paid for nothing     ${paidForNothing.length}; answered without a charge ${deliveredUnpaid.length}; onboarding sessions ${sessions} = settled onboardings ${settledOnboardings}`,
      `  recovered            first paid 2xx ${recoveryMs ?? "never"} ms after the chain returned (bound ${RECOVERY_BOUND_MS} ms)`,
    ].join("\n"),
  );

  const context = `${name}\n--- patchbay ---\n${server.output().slice(-20_000)}`;
  expect(server.output(), "an unhandled rejection was logged").not.toContain("unhandled promise rejection");
  expect(
    during.filter((c) => !ok(c)).length,
    `${context}\nno paid call was refused while the chain was away: the fault did not bite`,
  ).toBeGreaterThan(0);
  expect(overBound.map(describeCall), context).toEqual([]);
  expect(serverErrors.map(describeCall), context).toEqual([]);
  expect(without503RetryAfter.map(describeCall), context).toEqual([]);
  expect(withoutCode.map(describeCall), context).toEqual([]);
  expect(unpaidAnswers.map(describeCall), context).toEqual([]);
  expect(wrongReceipts.map(describeCall), context).toEqual([]);
  expect(chargedWithoutAnswer.map(describeCall), context).toEqual([]);
  expect(
    notReplayed.map((r) => describeCall(r.again)),
    context,
  ).toEqual([]);
  expect(
    heldNotDelivered.map((r) => describeCall(r.again)),
    context,
  ).toEqual([]);
  expect(paidForNothing, context).toEqual([]);
  expect(deliveredUnpaid, context).toEqual([]);
  expect(spent, context).toEqual(owed);
  expect(settledRows.length, context).toBe(usedKeys.length);
  expect(openRows, context).toEqual([]);
  expect(sessions, context).toBe(settledOnboardings);
  expect(recoveryMs, context).toBeDefined();
  expect(recoveryMs ?? Number.POSITIVE_INFINITY, context).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
}

function describeCall(c: PaidCall): string {
  return `${c.kind} ${c.method} ${new URL(c.url).pathname} → ${c.status} ${c.code ?? ""}${c.reason ? ` (${c.reason})` : ""} in ${c.ms} ms${c.retryAfter ? ` (Retry-After ${c.retryAfter})` : ""}${c.replayed ? " replayed" : ""}`;
}

/** "signup 201×3 · read 200×40 503×2 · onboard 201×12". */
function byKind(calls: PaidCall[]): string {
  const kinds: CallKind[] = ["signup", "read", "onboard"];
  return kinds
    .map((kind) => {
      const counts = new Map<string, number>();
      for (const c of calls.filter((x) => x.kind === kind)) {
        const status = String(c.status);
        counts.set(status, (counts.get(status) ?? 0) + 1);
      }
      return `${kind} ${[...counts].map(([status, n]) => `${status}×${n}`).join(" ") || "–"}`;
    })
    .join(" · ");
}

/** "503 payments_unavailable×4, 402 payment_failed×1". */
function byCode(calls: PaidCall[]): string {
  const counts = new Map<string, number>();
  for (const c of calls) {
    const key = `${c.status} ${c.code ?? "(no code)"}${c.reason ? ` (${c.reason})` : ""}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, n]) => `${key}×${n}`).join(", ") || "none";
}
