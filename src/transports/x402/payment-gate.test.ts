import { createHash } from "node:crypto";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentRequired, SettleResponse } from "@x402/core/types";
import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import { and, eq } from "drizzle-orm";
import { Hono } from "hono";
import { type Address, type Hex, parseUnits } from "viem";
import { test as base, describe, expect, vi } from "vitest";
import { createTestDatabase } from "../../../test/database.ts";
import {
  payingFetch as payingFetchOf,
  type ReadyPayments,
  signedPayment as signedPaymentOf,
  startTestChain,
} from "../../../test/lib/dev-chain.ts";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { x402Payments } from "../../platform/db/schema/x402-payments.ts";
import { createLogger } from "../../platform/logging/logger.ts";
import { createLocalFacilitator } from "../../platform/payments/facilitator.ts";
import { paymentsUnavailable, ready } from "../../platform/payments/payments.ts";
import { readPrices } from "../../platform/payments/prices.ts";
import { generateKek, parseKeyring } from "../../platform/vault/keyring.ts";
import type { AppEnv } from "../http/env.ts";
import { handleError } from "../http/problem.ts";
import { requestId } from "../http/request-id.ts";
import type { PaidRoutes } from "./paid-routes.ts";
import { paymentGate, paymentOf } from "./payment-gate.ts";
import { readPaymentIdentity } from "./payment-identity.ts";

const BASE_URL = "http://patchbay.test";
const keyring = parseKeyring(generateKek(1));
const READ = 10_000n; // $0.01 in USDC atomic units
const routes: PaidRoutes = {
  "GET /x402/ping": {
    price: "read",
    description: "Answers pong to the payer",
    extensions: declareDiscoveryExtension({ output: { example: { pong: true, payer: "0x…" } } }),
  },
  "POST /x402/refuse": { price: "signup", description: "Always refuses (422)" },
  "GET /x402/crash": { price: "read", description: "Always throws (500)" },
  "POST /x402/drain": { price: "read", description: "Empties the payer's wallet before settlement" },
  "DELETE /x402/thing": { price: "read", description: "Answers 204 No Content" },
};

type World = {
  payments: ReadyPayments;
  db: Db;
  app: Hono<AppEnv>;
  runs: Record<string, number>;
  balanceOf(address: Address): Promise<bigint>;
  /** A fresh payer holding `usd` test USDC, moved from the demo payer. */
  fundedPayer(index: number, usd: string): Promise<{ address: Address; privateKey: Hex }>;
  transfer(from: Hex, to: Address, amount: bigint): Promise<void>;
};

const test = base.extend<{ world: World }>({
  world: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest fixtures take their deps by destructuring
    async ({}, use) => {
      const logger = createLogger({ level: "silent" });
      const chain = await startTestChain();
      const { payments } = chain;
      const devChain = payments.devChain;
      if (!devChain) throw new Error("no dev chain");
      const database = await createTestDatabase();
      const runs: Record<string, number> = {};
      const count = (name: string) => {
        runs[name] = (runs[name] ?? 0) + 1;
      };
      const transfer = chain.transfer;

      const app = new Hono<AppEnv>();
      app.onError(handleError);
      app.use("*", requestId());
      app.use(
        "/x402/*",
        paymentGate({ payments, routes, db: database.handle.db, keyring, logger, baseUrl: BASE_URL }),
      );
      app.get("/x402/ping", async (c) => {
        count("ping");
        await new Promise((resolve) => setTimeout(resolve, 50)); // long enough for copies to overlap
        return c.json({ pong: true, payer: paymentOf(c).payer, query: c.req.query("q") ?? null });
      });
      app.post("/x402/refuse", () => {
        count("refuse");
        throw new AppError("invalid_request", "This route refuses everything.");
      });
      app.get("/x402/crash", () => {
        count("crash");
        throw new Error("handler exploded at 0xdeadbeef");
      });
      app.post("/x402/drain", async (c) => {
        count("drain");
        const key = c.req.header("x-test-payer-key") as Hex;
        await transfer(key, devChain.payer.address, await chain.balanceOf(paymentOf(c).payer));
        return c.json({ drained: true });
      });
      app.get("/x402/free", (c) => c.json({ free: true }));
      app.delete("/x402/thing", (c) => {
        count("thing");
        return c.body(null, 204);
      });

      await use({
        payments,
        db: database.handle.db,
        app,
        runs,
        balanceOf: chain.balanceOf,
        fundedPayer: chain.fundedPayer,
        transfer,
      });
      await database.drop();
      await chain.close();
    },
    { scope: "file" },
  ],
});

/** The dev chain's own facilitator, for a test to wrap with faults of its own. */
function realFacilitator(world: World) {
  const devChain = world.payments.devChain;
  if (!devChain) throw new Error("no dev chain");
  return createLocalFacilitator({
    rpcUrl: devChain.rpcUrl,
    chainId: devChain.chainId,
    network: devChain.network,
    privateKey: devChain.facilitator.privateKey,
  });
}

const payingFetch = (world: World, privateKey: Hex) => payingFetchOf(world.app, world.payments, privateKey);
const signedPayment = (world: World, privateKey: Hex, path: string, method = "GET") =>
  signedPaymentOf(world.app, world.payments, privateKey, `${BASE_URL}${path}`, { method });

/**
 * An app of its own whose `GET /x402/ping`, behind a gate on `world`'s chain (with `facilitator`,
 * `db` or `clock` in place of the world's), counts its runs and answers `{ pong: <runs> }`.
 */
function gatedPing(
  world: World,
  options: { facilitator?: FacilitatorClient; db?: Db; clock?: () => Date } = {},
) {
  const logger = createLogger({ level: "silent" });
  const { network, payTo, asset, prices } = world.payments;
  const payments = options.facilitator
    ? ready({ network, payTo, asset, prices, facilitator: options.facilitator, logger, devChain: undefined })
    : world.payments;
  const db = options.db ?? world.db;
  const app = new Hono<AppEnv>();
  app.onError(handleError);
  app.use("*", requestId());
  app.use(
    "/x402/*",
    paymentGate({ payments, routes, db, keyring, logger, baseUrl: BASE_URL, clock: options.clock }),
  );
  let runs = 0;
  app.get("/x402/ping", (c) => {
    runs += 1;
    return c.json({ pong: runs });
  });
  return { app, runs: () => runs };
}

describe("x402 payment gate", () => {
  test("an unpaid call gets a 402 whose PAYMENT-REQUIRED challenge the official client can pay", async ({
    world,
  }) => {
    const res = await world.app.request(`${BASE_URL}/x402/ping`);
    expect(res.status).toBe(402);
    expect(await res.json()).toMatchObject({ code: "payment_required", price: "$0.01" });
    const required: PaymentRequired = decodePaymentRequiredHeader(res.headers.get("payment-required") ?? "");
    expect(required.x402Version).toBe(2);
    expect(required.resource.url).toBe(`${BASE_URL}/x402/ping`);
    expect(required.accepts).toEqual([
      {
        scheme: "exact",
        network: world.payments.network,
        asset: world.payments.asset?.address,
        amount: READ.toString(),
        payTo: world.payments.payTo,
        maxTimeoutSeconds: 300,
        extra: { name: "USD Coin", version: "2" },
      },
    ]);
    expect(required.extensions?.bazaar).toBeDefined();
    // HEAD reaches the GET handler in Hono: it must be paid for too.
    expect((await world.app.request(`${BASE_URL}/x402/ping`, { method: "HEAD" })).status).toBe(402);
    expect(world.runs.ping).toBeUndefined();
    expect((await world.app.request(`${BASE_URL}/x402/free`)).status).toBe(200);
  });

  test("a paid call runs the handler once, answers with a receipt and moves exactly the price", async ({
    world,
  }) => {
    const payer = await world.fundedPayer(3, "1");
    const before = {
      payer: await world.balanceOf(payer.address),
      payTo: await world.balanceOf(world.payments.payTo),
    };
    const runs = world.runs.ping ?? 0;

    const res = await payingFetch(world, payer.privateKey)(`${BASE_URL}/x402/ping`);

    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ pong: true, payer: payer.address, query: null });
    const receipt = decodePaymentResponseHeader(res.headers.get("payment-response") ?? "");
    expect(receipt).toMatchObject({ success: true, network: world.payments.network, payer: payer.address });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(res.headers.get("cache-control")).toContain("private");
    expect(world.runs.ping).toBe(runs + 1);
    expect(await world.balanceOf(payer.address)).toBe(before.payer - READ);
    expect(await world.balanceOf(world.payments.payTo)).toBe(before.payTo + READ);
  });

  test("a paid 204 settles, carries its receipt and is replayed as a 204 with no body", async ({ world }) => {
    const payer = await world.fundedPayer(9, "1");
    const before = await world.balanceOf(payer.address);
    const payment = await signedPayment(world, payer.privateKey, "/x402/thing", "DELETE");
    const headers = { "payment-signature": payment };
    const first = await world.app.request(`${BASE_URL}/x402/thing`, { method: "DELETE", headers });
    expect(first.status).toBe(204);
    expect(await first.text()).toBe("");
    expect(decodePaymentResponseHeader(first.headers.get("payment-response") ?? "")).toMatchObject({
      success: true,
    });
    const replay = await world.app.request(`${BASE_URL}/x402/thing`, { method: "DELETE", headers });
    expect(replay.status).toBe(204);
    expect(replay.headers.get("payment-replayed")).toBe("true");
    expect(world.runs.thing).toBe(1);
    expect(await world.balanceOf(payer.address)).toBe(before - READ);
  });

  test("a handler that refuses (4xx) or fails (5xx) costs nothing", async ({ world }) => {
    const payer = await world.fundedPayer(4, "1");
    const before = await world.balanceOf(payer.address);
    const pay = payingFetch(world, payer.privateKey);

    const refused = await pay(`${BASE_URL}/x402/refuse`, { method: "POST", body: "{}" });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: "invalid_request" });
    expect(refused.headers.get("payment-response")).toBeNull();

    const crashed = await pay(`${BASE_URL}/x402/crash`);
    expect(crashed.status).toBe(500);
    const body = await crashed.text();
    expect(body).toContain('"code":"internal"');
    expect(body).not.toContain("deadbeef");

    expect(world.runs.refuse).toBe(1);
    expect(world.runs.crash).toBe(1);
    expect(await world.balanceOf(payer.address)).toBe(before);
    const held = await world.db
      .select()
      .from(x402Payments)
      .where(eq(x402Payments.payer, payer.address.toLowerCase()));
    expect(held).toEqual([]); // released: the same payment may be used again
  });

  test("the same payment sent 20 times at once runs the handler once and transfers once", async ({
    world,
  }) => {
    const payer = await world.fundedPayer(5, "1");
    const before = await world.balanceOf(payer.address);
    const runs = world.runs.ping ?? 0;
    const payment = await signedPayment(world, payer.privateKey, "/x402/ping");

    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        world.app.request(`${BASE_URL}/x402/ping`, { headers: { "payment-signature": payment } }),
      ),
    );

    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    const bodies = await Promise.all(responses.map((r) => r.json()));
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
    const receipts = responses.map((r) =>
      decodePaymentResponseHeader(r.headers.get("payment-response") ?? ""),
    );
    expect(new Set(receipts.map((r) => r.transaction)).size).toBe(1);
    expect(responses.filter((r) => r.headers.get("payment-replayed") === "true")).toHaveLength(19);
    expect(world.runs.ping).toBe(runs + 1);
    expect(await world.balanceOf(payer.address)).toBe(before - READ);

    // Later replays get the stored answer; the same payment for another request is refused.
    const replay = await world.app.request(`${BASE_URL}/x402/ping`, {
      headers: { "payment-signature": payment },
    });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("payment-replayed")).toBe("true");
    const reused = await world.app.request(`${BASE_URL}/x402/ping?q=other`, {
      headers: { "payment-signature": payment },
    });
    expect(reused.status).toBe(422);
    expect(await reused.json()).toMatchObject({ code: "payment_reused" });
    expect(world.runs.ping).toBe(runs + 1);
    expect(await world.balanceOf(payer.address)).toBe(before - READ);
  });

  test("a payment that does not verify is refused with its reason and never reaches the handler", async ({
    world,
  }) => {
    const payer = await world.fundedPayer(6, "1");
    const runs = world.runs.ping ?? 0;
    const payment = await signedPayment(world, payer.privateKey, "/x402/ping");
    const decoded = JSON.parse(Buffer.from(payment, "base64").toString("utf8"));
    decoded.payload.authorization.value = "1"; // pay less than the price, same signature
    const tampered = Buffer.from(JSON.stringify(decoded)).toString("base64");

    const res = await world.app.request(`${BASE_URL}/x402/ping`, {
      headers: { "payment-signature": tampered },
    });

    expect(res.status).toBe(402);
    const body = await res.json();
    expect(body).toMatchObject({ code: "payment_invalid" });
    expect(body.reason).toMatch(/^[a-z0-9_]+$/);
    expect(decodePaymentRequiredHeader(res.headers.get("payment-required") ?? "").error).toBe(body.reason);
    expect(world.runs.ping).toBe(runs);
    const garbage = await world.app.request(`${BASE_URL}/x402/ping`, {
      headers: { "payment-signature": "%%%" },
    });
    expect(garbage.status).toBe(402);
    expect(await garbage.json()).toMatchObject({ code: "payment_invalid" });
  });

  test("when settlement fails the result is held, and the same payment sent again delivers it without a second run", async ({
    world,
  }) => {
    const payer = await world.fundedPayer(7, "1");
    const payment = await signedPayment(world, payer.privateKey, "/x402/drain", "POST");
    const send = () =>
      world.app.request(`${BASE_URL}/x402/drain`, {
        method: "POST",
        body: "{}",
        headers: { "payment-signature": payment, "x-test-payer-key": payer.privateKey },
      });

    const failed = await send();
    expect(failed.status).toBe(402);
    expect(await failed.json()).toMatchObject({ code: "payment_failed" });
    const receipt = decodePaymentResponseHeader(failed.headers.get("payment-response") ?? "");
    expect(receipt.success).toBe(false);
    expect(receipt.errorReason).toMatch(/^[a-z0-9_]+$/);
    expect(receipt.errorMessage).toBeUndefined();
    expect(world.runs.drain).toBe(1);

    await world.fundedPayer(7, "1"); // the wallet is refilled
    const delivered = await send();
    expect(delivered.status).toBe(200);
    expect(await delivered.json()).toEqual({ drained: true });
    expect(decodePaymentResponseHeader(delivered.headers.get("payment-response") ?? "").success).toBe(true);
    expect(world.runs.drain).toBe(1);
    expect(await world.balanceOf(payer.address)).toBe(parseUnits("1", 6) - READ);
    const [row] = await world.db
      .select()
      .from(x402Payments)
      .where(and(eq(x402Payments.payer, payer.address.toLowerCase()), eq(x402Payments.state, "settled")));
    expect(row?.transaction).toMatch(/^0x/);
  });

  test("a facilitator that does not answer is a 503 with Retry-After; an answer already produced is held for the same payment", async ({
    world,
  }) => {
    const real = realFacilitator(world);
    let fault: "verify" | "settle" | "pending" | undefined;
    const unreachable = () => Promise.reject(new Error("fetch failed: connect ECONNREFUSED 127.0.0.1:8545"));
    const pending = (): Promise<SettleResponse> =>
      Promise.resolve({
        success: false,
        errorReason: "settlement_pending",
        transaction: `0x${"ab".repeat(32)}`,
        network: world.payments.network,
      });
    const facilitator: FacilitatorClient = {
      verify: (p, r) => (fault === "verify" ? unreachable() : real.verify(p, r)),
      settle: (p, r) =>
        fault === "settle" ? unreachable() : fault === "pending" ? pending() : real.settle(p, r),
      getSupported: () => real.getSupported(),
    };
    const { app, runs } = gatedPing(world, { facilitator });
    const payer = await world.fundedPayer(11, "1");
    const before = await world.balanceOf(payer.address);
    const payment = await signedPaymentOf(app, world.payments, payer.privateKey, `${BASE_URL}/x402/ping`);
    const send = () => app.request(`${BASE_URL}/x402/ping`, { headers: { "payment-signature": payment } });

    // Before the handler: nothing ran, nothing is held.
    fault = "verify";
    const early = await send();
    expect(early.status).toBe(503);
    expect(early.headers.get("retry-after")).toBe("2");
    expect(await early.json()).toMatchObject({ code: "payments_unavailable" });
    expect(runs()).toBe(0);

    // After it: the outcome is unknown, so not a 402 "nothing was charged"; the answer is held.
    for (const unknown of ["settle", "pending"] as const) {
      fault = unknown;
      const late = await send();
      expect(late.status).toBe(503);
      expect(late.headers.get("retry-after")).toBe("2");
      const body = await late.json();
      expect(body).toMatchObject({ code: "payments_unavailable" });
      expect(body.detail).toContain("same payment");
      expect(runs()).toBe(1);
    }
    expect(await world.balanceOf(payer.address)).toBe(before);

    fault = undefined;
    const delivered = await send();
    expect(delivered.status).toBe(200);
    expect(await delivered.json()).toEqual({ pong: 1 });
    expect(runs()).toBe(1);
    expect(await world.balanceOf(payer.address)).toBe(before - READ);
  });

  test("verification runs beside the lock's read: a replay gets its stored answer whatever the facilitator does, and an unused verification is cancelled", async ({
    world,
  }) => {
    const real = realFacilitator(world);
    let fault: "unreachable" | "stalled" | undefined;
    let verified = 0;
    let unstall = () => {};
    const stalled = new Promise<void>((resolve) => {
      unstall = resolve;
    });
    const facilitator: FacilitatorClient = {
      verify: async (p, r) => {
        if (fault === "unreachable") throw new Error("fetch failed: connect ECONNREFUSED 127.0.0.1:8545");
        if (fault === "stalled") await stalled;
        const result = await real.verify(p, r);
        verified += 1;
        return result;
      },
      settle: (p, r) => real.settle(p, r),
      getSupported: () => real.getSupported(),
    };
    const logger = createLogger({ level: "silent" });
    const { network, payTo, asset, prices } = world.payments;
    const payments = ready({ network, payTo, asset, prices, facilitator, logger, devChain: undefined });
    if (payments.kind !== "ready") throw new Error("payments not ready");
    const canceled: string[] = [];
    payments.resourceServer.onVerifiedPaymentCanceled(async (context) => {
      canceled.push(context.reason);
    });
    const app = new Hono<AppEnv>();
    app.onError(handleError);
    app.use("*", requestId());
    app.use("/x402/*", paymentGate({ payments, routes, db: world.db, keyring, logger, baseUrl: BASE_URL }));
    let runs = 0;
    app.get("/x402/ping", async (c) => {
      runs += 1;
      // Both copies' verifications have answered (valid: nothing has settled yet).
      await vi.waitFor(() => expect(verified).toBe(2));
      return c.json({ pong: runs });
    });
    const payer = await world.fundedPayer(14, "1");
    const before = await world.balanceOf(payer.address);
    const payment = await signedPaymentOf(app, world.payments, payer.privateKey, `${BASE_URL}/x402/ping`);
    const send = () => app.request(`${BASE_URL}/x402/ping`, { headers: { "payment-signature": payment } });

    // Two copies at once: one runs, the other waits and gets its answer; its own verification,
    // valid but unused, is cancelled through the SDK.
    const copies = await Promise.all([send(), send()]);
    expect(copies.map((r) => r.status)).toEqual([200, 200]);
    expect(copies.filter((r) => r.headers.get("payment-replayed") === "true")).toHaveLength(1);
    expect(runs).toBe(1);
    await vi.waitFor(() => expect(canceled).toEqual(["after_verify_aborted"]));

    // The facilitator away: the replay is answered from the store, its verification's failure ignored.
    fault = "unreachable";
    const away = await send();
    expect(away.status).toBe(200);
    expect(away.headers.get("payment-replayed")).toBe("true");
    expect(await away.json()).toEqual({ pong: 1 });

    // The facilitator not answering: the replay does not wait for it.
    fault = "stalled";
    const waiting = await send();
    expect(waiting.status).toBe(200);
    expect(waiting.headers.get("payment-replayed")).toBe("true");
    expect(await waiting.json()).toEqual({ pong: 1 });
    expect(verified).toBe(2);
    unstall();
    await vi.waitFor(() => expect(verified).toBe(3)); // the spent nonce's verification, refused and dropped

    expect(runs).toBe(1);
    expect(canceled).toEqual(["after_verify_aborted"]);
    expect(await world.balanceOf(payer.address)).toBe(before - READ);
  });

  test("the claim is taken while the facilitator verifies; a payment that does not verify gives it back", async ({
    world,
  }) => {
    const real = realFacilitator(world);
    const rowOf = async (nonce: string) =>
      (await world.db.select().from(x402Payments).where(eq(x402Payments.nonce, nonce)))[0];
    const nonceOf = (payload: { payload: Record<string, unknown> }) =>
      String((payload.payload.authorization as { nonce: string }).nonce).toLowerCase();
    const seen: string[] = [];
    const facilitator: FacilitatorClient = {
      // Verification answers only once the payment's claim is in the table, as another instance sees it.
      verify: async (p, r) => {
        await vi.waitFor(
          async () => {
            const row = await rowOf(nonceOf(p));
            if (!row) throw new Error("no claim for the payment while the facilitator verifies it");
            seen.push(`${row.state}, requirements ${row.requirements === null ? "not yet" : "stored"}`);
          },
          { timeout: 10_000, interval: 5 },
        );
        return real.verify(p, r);
      },
      settle: (p, r) => real.settle(p, r),
      getSupported: () => real.getSupported(),
    };
    const { app, runs } = gatedPing(world, { facilitator });
    const payer = await world.fundedPayer(15, "1");
    const before = await world.balanceOf(payer.address);
    const send = (payment: string) =>
      app.request(`${BASE_URL}/x402/ping`, { headers: { "payment-signature": payment } });
    const decode = (payment: string) => JSON.parse(Buffer.from(payment, "base64").toString("utf8"));

    const payment = await signedPaymentOf(app, world.payments, payer.privateKey, `${BASE_URL}/x402/ping`);
    const paid = await send(payment);
    expect(paid.status).toBe(200);
    expect(seen).toEqual(["in_flight, requirements not yet"]);
    const settled = await rowOf(nonceOf(decode(payment)));
    expect(settled).toMatchObject({ state: "settled", amount: READ.toString() });
    expect(settled?.requirements).toMatchObject({
      amount: READ.toString(),
      payTo: world.payments.payTo,
      scheme: "exact",
    });

    const refused = decode(
      await signedPaymentOf(app, world.payments, payer.privateKey, `${BASE_URL}/x402/ping`),
    );
    refused.payload.authorization.value = "1"; // pay less than the price, same signature
    const res = await send(Buffer.from(JSON.stringify(refused)).toString("base64"));
    expect(res.status).toBe(402);
    expect(await res.json()).toMatchObject({ code: "payment_invalid" });
    expect(seen).toHaveLength(2);
    expect(await rowOf(nonceOf(refused))).toBeUndefined();
    expect(runs()).toBe(1);
    expect(await world.balanceOf(payer.address)).toBe(before - READ);
  });

  test("another authorization's unanswered claim on the nonce is waited for, not refused as reused; a refused copy stops waiting; once stale, a payment that verifies takes it over", async ({
    world,
  }) => {
    // The gate's clock: `base`, plus `step` more at each reading (a wait ends once 30 s have passed).
    const start = Date.now();
    let base = start;
    let step = 31_000;
    const clock = () => {
      const now = new Date(base);
      base += step;
      return now;
    };
    const { app, runs } = gatedPing(world, { clock });
    const payer = await world.fundedPayer(16, "1");
    const before = await world.balanceOf(payer.address);
    const payment = await signedPaymentOf(app, world.payments, payer.privateKey, `${BASE_URL}/x402/ping`);
    const decoded = JSON.parse(Buffer.from(payment, "base64").toString("utf8"));
    const authorization = decoded.payload.authorization;
    const key = {
      network: decoded.accepted.network,
      asset: decoded.accepted.asset.toLowerCase(),
      payer: authorization.from.toLowerCase(),
      nonce: authorization.nonce.toLowerCase(),
    };
    // A forged header naming this payer's nonce, claimed and still being verified.
    await world.db.insert(x402Payments).values({
      ...key,
      paymentHash: "f".repeat(64),
      requestHash: "f".repeat(64),
      route: "GET /x402/ping",
      amount: "1",
      state: "in_flight",
      claimId: "forged",
      claimedAt: new Date(start),
      expiresAt: new Date(start + 86_400_000),
    });
    const send = (header = payment) =>
      app.request(`${BASE_URL}/x402/ping`, { headers: { "payment-signature": header } });

    const waited = await send();
    expect(waited.status).toBe(409);
    expect(await waited.json()).toMatchObject({ code: "payment_in_flight" });

    // Another copy the facilitator refuses stops waiting once refused (the clock stands still).
    step = 0;
    const tampered = structuredClone(decoded);
    tampered.payload.authorization.value = "1";
    const refused = await send(Buffer.from(JSON.stringify(tampered)).toString("base64"));
    expect(refused.status).toBe(402);
    expect(await refused.json()).toMatchObject({ code: "payment_invalid" });
    expect(runs()).toBe(0);

    // Abandoned (10 minutes on), the forged claim is taken over by the payment, which verifies.
    base = start + 11 * 60_000;
    const paid = await send();
    expect(paid.status).toBe(200);
    expect(runs()).toBe(1);
    expect(await world.balanceOf(payer.address)).toBe(before - READ);
    const [row] = await world.db.select().from(x402Payments).where(eq(x402Payments.nonce, key.nonce));
    expect(row).toMatchObject({ state: "settled", amount: READ.toString() });
    expect(row?.paymentHash).not.toBe("f".repeat(64));
  });

  test("a claim that cannot be given back leaves the refusal as the answer; a held answer stored without requirements settles with the verified ones", async ({
    world,
  }) => {
    // The database refuses the claim's release (as when it has gone away).
    const noDelete = new Proxy(world.db, {
      get: (target, name) =>
        name === "delete"
          ? () => {
              throw new Error("the database is away");
            }
          : Reflect.get(target, name),
    });
    const { app, runs } = gatedPing(world, { db: noDelete });
    const payer = await world.fundedPayer(17, "1");
    const before = await world.balanceOf(payer.address);
    const decode = (header: string) => JSON.parse(Buffer.from(header, "base64").toString("utf8"));
    const send = (header: string) =>
      app.request(`${BASE_URL}/x402/ping`, { headers: { "payment-signature": header } });

    const tampered = decode(
      await signedPaymentOf(app, world.payments, payer.privateKey, `${BASE_URL}/x402/ping`),
    );
    tampered.payload.authorization.value = "1";
    const refused = await send(Buffer.from(JSON.stringify(tampered)).toString("base64"));
    expect(refused.status).toBe(402);
    expect(await refused.json()).toMatchObject({ code: "payment_invalid" });
    const nonce = tampered.payload.authorization.nonce.toLowerCase();
    const [left] = await world.db.select().from(x402Payments).where(eq(x402Payments.nonce, nonce));
    expect(left).toMatchObject({ state: "in_flight", requirements: null });

    // A held answer whose row has no requirements (written by an instance from before they were
    // stored with the answer): settled with this payment's verified requirements, not run again.
    const payment = await signedPaymentOf(app, world.payments, payer.privateKey, `${BASE_URL}/x402/ping`);
    const read = readPaymentIdentity(payment);
    if (!read.ok) throw new Error(read.problem);
    await world.db.insert(x402Payments).values({
      ...read.identity.key,
      paymentHash: read.identity.paymentHash,
      requestHash: createHash("sha256").update("GET\n/x402/ping\n").digest("hex"),
      route: "GET /x402/ping",
      amount: READ.toString(),
      state: "failed",
      claimId: "held",
      responseStatus: 200,
      responseHeaders: { "content-type": "application/json" },
      responseBody: '{"held":true}',
      claimedAt: new Date(),
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    const delivered = await send(payment);
    expect(delivered.status).toBe(200);
    expect(await delivered.json()).toEqual({ held: true });
    expect(runs()).toBe(0);
    expect(await world.balanceOf(payer.address)).toBe(before - READ);
    const [row] = await world.db
      .select()
      .from(x402Payments)
      .where(eq(x402Payments.nonce, read.identity.key.nonce));
    expect(row?.state).toBe("settled");
    expect(row?.requirements).toMatchObject({ amount: READ.toString(), scheme: "exact" });
  });

  test("without payments, paid routes answer 503 payments_unavailable and free ones still work", async ({
    world,
  }) => {
    const app = new Hono<AppEnv>();
    app.onError(handleError);
    app.use("*", requestId());
    app.use(
      "/x402/*",
      paymentGate({
        payments: paymentsUnavailable("dev chain off", readPrices("")),
        routes,
        db: world.db,
        keyring,
        logger: createLogger({ level: "silent" }),
        baseUrl: BASE_URL,
      }),
    );
    app.get("/x402/ping", (c) => c.json({ pong: true }));
    app.get("/x402/free", (c) => c.json({ free: true }));

    const res = await app.request(`${BASE_URL}/x402/ping`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: "payments_unavailable" });
    expect((await app.request(`${BASE_URL}/x402/free`)).status).toBe(200);
  });
});
