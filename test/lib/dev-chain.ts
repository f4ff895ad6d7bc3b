import { tmpdir } from "node:os";
import { join } from "node:path";
import { x402Client, x402HTTPClient } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { createSIWxClientExtension } from "@x402/extensions/sign-in-with-x";
import { wrapFetchWithPayment } from "@x402/fetch";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  erc20Abi,
  type Hex,
  http,
  parseUnits,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createLogger } from "../../src/platform/logging/logger.ts";
import { deriveDevAccount } from "../../src/platform/payments/dev-chain-deploy.ts";
import { type Payments, startPayments } from "../../src/platform/payments/payments.ts";
import { readPrices } from "../../src/platform/payments/prices.ts";

export type ReadyPayments = Extract<Payments, { kind: "ready" }>;

/** A local anvil with the test USDC and an in-process facilitator, as `npm start` runs it. */
export type TestChain = {
  payments: ReadyPayments;
  asset: Address;
  balanceOf(address: Address): Promise<bigint>;
  /** Dev account `index`, given `usd` test USDC by the demo payer. */
  fundedPayer(index: number, usd: string): Promise<{ address: Address; privateKey: Hex }>;
  transfer(from: Hex, to: Address, amount: bigint): Promise<void>;
  close(): Promise<void>;
};

export async function startTestChain(options: { payTo?: Address } = {}): Promise<TestChain> {
  const payments = await startPayments({
    settings: {
      devChain: { port: 0 },
      remote: undefined,
      payTo: options.payTo ?? deriveDevAccount(2).address,
      prices: readPrices(""),
    },
    cacheDir: join(tmpdir(), "patchbay-contracts"),
    logger: createLogger({ level: "silent" }),
  });
  if (payments.kind !== "ready" || !payments.devChain || !payments.asset) throw new Error("no dev chain");
  const chain = payments.devChain;
  const asset = payments.asset.address;
  const rpc = http(chain.rpcUrl);
  const reader = createPublicClient({ transport: rpc });
  const transfer = async (from: Hex, to: Address, amount: bigint) => {
    const wallet = createWalletClient({ account: privateKeyToAccount(from), transport: rpc });
    const hash = await wallet.writeContract({
      chain: null,
      address: asset,
      abi: erc20Abi,
      functionName: "transfer",
      args: [to, amount],
    });
    await reader.waitForTransactionReceipt({ hash });
  };
  return {
    payments,
    asset,
    balanceOf: (address) =>
      reader.readContract({ address: asset, abi: erc20Abi, functionName: "balanceOf", args: [address] }),
    async fundedPayer(index, usd) {
      const account = deriveDevAccount(index);
      await transfer(chain.payer.privateKey, account.address, parseUnits(usd, 6));
      return account;
    },
    transfer,
    close: () => payments.close(),
  };
}

type FetchTarget = { fetch(request: Request): Response | Promise<Response> };

/** `fetch` served in-process by a Hono app. */
export const appFetch =
  (app: FetchTarget): typeof fetch =>
  async (input, init) =>
    app.fetch(new Request(input, init));

/**
 * The official client as an agent configures it for the dev chain: the test token is not one of
 * the SDK's default assets, so it is allowed explicitly, with a per-payment cap ($10).
 */
export function agentClient(payments: Pick<ReadyPayments, "network" | "asset">, privateKey: Hex): x402Client {
  return x402Client.fromConfig({
    schemes: [{ network: payments.network, client: new ExactEvmScheme(privateKeyToAccount(privateKey)) }],
    spendControls: {
      allowedAssets: [
        { network: payments.network, asset: payments.asset?.address ?? "", maxAmountPerPayment: "10000000" },
      ],
    },
  });
}

export const payingFetch = (app: FetchTarget, payments: ReadyPayments, privateKey: Hex) =>
  wrapFetchWithPayment(appFetch(app), agentClient(payments, privateKey));

/**
 * The same client with x402's sign-in-with-x extension registered, as an agent that reads for
 * free with its wallet: a route's 402 that offers a sign-in is answered with a signature, not a payment.
 */
export function signingInFetch(app: FetchTarget, payments: ReadyPayments, privateKey: Hex): typeof fetch {
  const client = agentClient(payments, privateKey);
  client.registerExtension(createSIWxClientExtension({ signers: [privateKeyToAccount(privateKey)] }));
  return wrapFetchWithPayment(appFetch(app), client);
}

/** One signed payment for a request, as the official client would send it: reusable verbatim. */
export async function signedPayment(
  app: FetchTarget,
  payments: ReadyPayments,
  privateKey: Hex,
  url: string,
  init: RequestInit = {},
): Promise<string> {
  const challenge = await appFetch(app)(url, init);
  const required = decodePaymentRequiredHeader(challenge.headers.get("payment-required") ?? "");
  const client = new x402HTTPClient(agentClient(payments, privateKey));
  const payload = await client.createPaymentPayload(required);
  return client.encodePaymentSignatureHeader(payload)["PAYMENT-SIGNATURE"] ?? "";
}
