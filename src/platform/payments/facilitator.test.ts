import { createServer, type Socket } from "node:net";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { agentClient, startTestChain, type TestChain } from "../../../test/lib/dev-chain.ts";
import { freePort } from "../../../test/lib/spawn-server.ts";
import { devAccount } from "./dev-chain.ts";
import { DEV_CHAIN_ID } from "./dev-chain-constants.ts";
import { createLocalFacilitator } from "./facilitator.ts";

const READ = "10000"; // $0.01

/**
 * The dev chain's facilitator when the node misbehaves: no answer is an outage (a throw, which
 * the gate answers 503), never a refusal and never a wait past the bound; a settlement whose
 * answer was lost is found again instead of failing as "nonce already used"; a transaction the
 * node dropped is sent again instead of being waited for.
 */
describe("the local facilitator", () => {
  let chain: TestChain;
  beforeAll(async () => {
    chain = await startTestChain();
  }, 60_000);
  afterAll(() => chain?.close());

  const rpcUrl = () => chain.payments.devChain?.rpcUrl ?? "";
  const facilitatorOn = (url: string) =>
    createLocalFacilitator({
      rpcUrl: url,
      chainId: DEV_CHAIN_ID,
      network: chain.payments.network,
      privateKey: devAccount(0).privateKey,
    });
  const requirements = (): PaymentRequirements => ({
    scheme: "exact",
    network: chain.payments.network,
    asset: chain.asset,
    amount: READ,
    payTo: chain.payments.payTo,
    maxTimeoutSeconds: 300,
    extra: { name: "USD Coin", version: "2" },
  });
  const sign = (privateKey: Hex): Promise<PaymentPayload> =>
    agentClient(chain.payments, privateKey).createPaymentPayload({
      x402Version: 2,
      resource: { url: "http://patchbay.test/x402/ping" },
      accepts: [requirements()],
    });
  const rpc = async (method: string, params: unknown[] = []) => {
    const res = await fetch(rpcUrl(), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    const body = (await res.json()) as { error?: { message?: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
  };

  test("a node that never answers is an outage within 10 s, not a refused payment", async () => {
    // Accepts connections and never says a word: what a frozen (SIGSTOPped) node looks like.
    const held: Socket[] = [];
    const silent = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const address = silent.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      const payer = await chain.fundedPayer(30, "1");
      const started = Date.now();
      await expect(
        facilitatorOn(`http://127.0.0.1:${port}`).verify(await sign(payer.privateKey), requirements()),
      ).rejects.toThrow(/took too long/);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  }, 20_000);

  test("a node that refuses connections is an outage for verify and settle alike", async () => {
    const payer = await chain.fundedPayer(31, "1");
    const dead = facilitatorOn(`http://127.0.0.1:${await freePort()}`);
    const payment = await sign(payer.privateKey);
    await expect(dead.verify(payment, requirements())).rejects.toThrow(/HTTP request failed/);
    await expect(dead.settle(payment, requirements())).rejects.toThrow(/HTTP request failed/);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n);
  });

  test("settling a payment again after its answer was lost returns the first transaction", async () => {
    const payer = await chain.fundedPayer(32, "1");
    const payment = await sign(payer.privateKey);
    const first = await facilitatorOn(rpcUrl()).settle(payment, requirements());
    expect(first).toMatchObject({ success: true });
    // Another process (a restart, another instance) with no memory of the first settlement.
    const again = await facilitatorOn(rpcUrl()).settle(payment, requirements());
    expect(again).toMatchObject({ success: true, transaction: first.transaction });
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - BigInt(READ));
  });

  test("a settlement the node dropped is sent again, and later ones do not queue behind its nonce", async () => {
    const payer = await chain.fundedPayer(33, "1");
    const facilitator = facilitatorOn(rpcUrl());
    const payment = await sign(payer.privateKey);
    await rpc("evm_setAutomine", [false]);
    let pending: Awaited<ReturnType<typeof facilitator.settle>>;
    try {
      // Sent, never mined: the receipt does not come within the confirmation bound.
      pending = await facilitator.settle(payment, requirements());
      await rpc("anvil_dropAllTransactions");
    } finally {
      await rpc("evm_setAutomine", [true]);
    }
    expect(pending).toMatchObject({ success: false, errorReason: "settlement_pending" });
    const retried = await facilitator.settle(payment, requirements());
    // Sent again (the same nonce, so the same transaction) and mined, not waited for in vain.
    expect(retried).toMatchObject({ success: true });
    const next = await facilitator.settle(await sign(payer.privateKey), requirements());
    expect(next).toMatchObject({ success: true });
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 2n * BigInt(READ));
  }, 30_000);
});
