import { type FacilitatorClient, HTTPFacilitatorClient, x402ResourceServer } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import type { Address } from "viem";
import { loadOnce } from "../load-once.ts";
import type { Logger } from "../logging/logger.ts";
import { type DevChain, startDevChain } from "./dev-chain.ts";
import { guardFacilitator } from "./facilitator-boundary.ts";
import type { PaymentAsset, PaymentSettings } from "./payment-settings.ts";
import type { Prices } from "./prices.ts";

type Terms = {
  network: Network;
  payTo: Address;
  /** Undefined: the SDK's default USDC for `network`. */
  asset: PaymentAsset | undefined;
  prices: Prices;
  /** Present when this process runs the local chain (the embedded default). */
  devChain: DevChain | undefined;
};

/** Payments as the running service has them: able to charge, or not (and why, for the log). */
export type Payments =
  | (Terms & {
      kind: "ready";
      /** The SDK's resource server: the `exact` EVM scheme over a guarded facilitator. */
      resourceServer: x402ResourceServer;
      close(): Promise<void>;
    })
  | { kind: "unavailable"; reason: string; prices: Prices; close(): Promise<void> };

/**
 * Brings payments up as `settings` say: a remote facilitator, or the local dev chain with an
 * in-process facilitator (started here, stopped by `close()`), or nothing.
 */
export async function startPayments(args: {
  settings: PaymentSettings;
  /** Where the compiled test token is cached (the data dir's `cache/`). */
  cacheDir: string;
  logger: Logger;
}): Promise<Payments> {
  const { settings, logger } = args;
  if (settings.remote) {
    const { facilitatorUrl, ...terms } = settings.remote;
    const facilitator = new HTTPFacilitatorClient({ url: facilitatorUrl });
    return ready({ ...terms, prices: settings.prices, facilitator, logger, devChain: undefined });
  }
  if (!settings.devChain) {
    return paymentsUnavailable(
      "no facilitator is configured (PATCHBAY_X402_FACILITATOR_URL) and the dev chain is off",
      settings.prices,
    );
  }
  const chain = await startDevChain({ port: settings.devChain.port, cacheDir: args.cacheDir });
  return ready({
    network: chain.network,
    payTo: settings.payTo ?? chain.facilitator.address,
    asset: { address: chain.usdcAddress, name: "USD Coin", version: "2" },
    prices: settings.prices,
    // The in-process facilitator is viem and the SDK's EVM facilitator, most of the payments
    // code: loaded when the first payment (or the first paid route's set-up) asks for it.
    facilitator: loadedOnFirstCall(async () => {
      const { createLocalFacilitator } = await import("./facilitator.ts");
      return createLocalFacilitator({ ...chain, privateKey: chain.facilitator.privateKey });
    }),
    logger,
    devChain: chain,
  });
}

/** A facilitator built by `load` when first called; a failed load is tried again on the next call. */
function loadedOnFirstCall(load: () => Promise<FacilitatorClient>): FacilitatorClient {
  const facilitator = loadOnce(load);
  return {
    verify: async (payload, requirements) => (await facilitator()).verify(payload, requirements),
    settle: async (payload, requirements) => (await facilitator()).settle(payload, requirements),
    getSupported: async () => (await facilitator()).getSupported(),
  };
}

export function paymentsUnavailable(reason: string, prices: Prices): Payments {
  return { kind: "unavailable", reason, prices, close: async () => {} };
}

/** Payments against a facilitator the caller already has (tests; `startPayments`). */
export function ready(args: Terms & { facilitator: FacilitatorClient; logger: Logger }): Payments {
  const { facilitator, logger, ...terms } = args;
  const resourceServer = new x402ResourceServer(guardFacilitator(facilitator, logger)).register(
    args.network,
    new ExactEvmScheme(),
  );
  return {
    kind: "ready",
    ...terms,
    resourceServer,
    close: async () => {
      await args.devChain?.stop();
    },
  };
}

/**
 * What `patchbay serve` prints when it runs the local chain: everything an agent needs to pay,
 * with the paid routes and their prices (`paidRoutes`, one a line, from the x402 route table).
 * The payer key is anvil's public test key (account #1), worthless outside this chain.
 */
export function devChainBanner(payments: Payments, baseUrl: string, paidRoutes: string[]): string[] {
  if (payments.kind !== "ready" || !payments.devChain) return [];
  const chain = payments.devChain;
  return [
    "  x402 dev chain (anvil; test money, reset on every start)",
    `  RPC URL:         ${chain.rpcUrl}   (${chain.network})`,
    `  Test USDC:       ${chain.usdcAddress}`,
    `  Demo payer:      ${chain.payer.address}   (1000 test USDC)`,
    `  Payer key:       ${chain.payer.privateKey}   (anvil account #1)`,
    `  Paid to:         ${payments.payTo}`,
    `  Catalog:         ${baseUrl}/x402   (and ${baseUrl}/llms.txt)`,
    "  Paid routes:",
    ...paidRoutes,
    "  Try an agent:",
    `    PATCHBAY_URL=${baseUrl} AGENT_PRIVATE_KEY=${chain.payer.privateKey} npm run example:agent`,
    "",
  ];
}
