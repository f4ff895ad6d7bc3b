import type { Network } from "@x402/core/types";
import type { Address } from "viem";
import { getAddress, isAddress } from "viem/utils";
import { ConfigError } from "../../config-error.ts";
import { type Prices, readPrices } from "./prices.ts";

/** The stablecoin paid in, with the EIP-712 domain its EIP-3009 signatures use. */
export type PaymentAsset = { address: Address; name: string; version: string };

/**
 * How patchbay takes payments (DESIGN §7), read from the environment:
 *
 * - `PATCHBAY_X402_FACILITATOR_URL` set → a remote facilitator on `PATCHBAY_X402_NETWORK`
 *   (CAIP-2), paying `PATCHBAY_X402_PAY_TO`, in `PATCHBAY_X402_ASSET` (default: the SDK's USDC
 *   for that network). No local chain.
 * - otherwise, in development, unless `PATCHBAY_DEV_CHAIN=off` → the local chain (anvil on
 *   127.0.0.1:`PATCHBAY_DEV_CHAIN_PORT`, default 8545) and an in-process facilitator.
 * - otherwise payments are unavailable and paid routes answer 503 `payments_unavailable`.
 *
 * Production never starts a chain; tests start their own (port 0) explicitly.
 */
export type PaymentSettings = {
  devChain: { port: number } | undefined;
  remote:
    | { facilitatorUrl: string; network: Network; payTo: Address; asset: PaymentAsset | undefined }
    | undefined;
  /** Overrides the dev chain's payee (default: account #0). */
  payTo: Address | undefined;
  prices: Prices;
};

type Env = Record<string, string | undefined>;
type NodeEnv = "development" | "test" | "production";

export function readPaymentSettings(env: Env, nodeEnv: NodeEnv): PaymentSettings {
  const prices = readPrices(env.PATCHBAY_X402_PRICES);
  const payTo = optionalAddress(env, "PATCHBAY_X402_PAY_TO");
  const devChainFlag = env.PATCHBAY_DEV_CHAIN?.trim().toLowerCase() || undefined;
  if (devChainFlag !== undefined && devChainFlag !== "on" && devChainFlag !== "off") {
    throw new ConfigError("PATCHBAY_DEV_CHAIN", "must be on or off");
  }
  if (nodeEnv === "production" && devChainFlag === "on") {
    throw new ConfigError(
      "PATCHBAY_DEV_CHAIN",
      "cannot be on in production; configure PATCHBAY_X402_FACILITATOR_URL",
    );
  }
  const port = readPort(env.PATCHBAY_DEV_CHAIN_PORT);

  const facilitatorUrl = env.PATCHBAY_X402_FACILITATOR_URL?.trim();
  if (facilitatorUrl) {
    const https = /^https:\/\//.test(facilitatorUrl);
    if (!https && !(nodeEnv !== "production" && /^http:\/\//.test(facilitatorUrl))) {
      throw new ConfigError(
        "PATCHBAY_X402_FACILITATOR_URL",
        "must be an https URL (http only outside production)",
      );
    }
    const network = env.PATCHBAY_X402_NETWORK?.trim();
    if (!network || !/^eip155:[1-9]\d*$/.test(network)) {
      throw new ConfigError(
        "PATCHBAY_X402_NETWORK",
        "must be an EVM CAIP-2 id such as eip155:8453 when a facilitator URL is set",
      );
    }
    if (!payTo) throw new ConfigError("PATCHBAY_X402_PAY_TO", "is required when a facilitator URL is set");
    const assetAddress = optionalAddress(env, "PATCHBAY_X402_ASSET");
    const asset = assetAddress
      ? {
          address: assetAddress,
          name: env.PATCHBAY_X402_ASSET_NAME?.trim() || "USD Coin",
          version: env.PATCHBAY_X402_ASSET_VERSION?.trim() || "2",
        }
      : undefined;
    return {
      devChain: undefined,
      remote: { facilitatorUrl, network: network as Network, payTo, asset },
      payTo,
      prices,
    };
  }
  const devChainOn = nodeEnv === "development" ? devChainFlag !== "off" : devChainFlag === "on";
  return { devChain: devChainOn ? { port } : undefined, remote: undefined, payTo, prices };
}

function readPort(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return 8545;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ConfigError("PATCHBAY_DEV_CHAIN_PORT", "must be a port number (0 picks a free one)");
  }
  return port;
}

function optionalAddress(env: Env, name: string): Address | undefined {
  const value = env[name]?.trim();
  if (!value) return undefined;
  if (!isAddress(value, { strict: false })) throw new ConfigError(name, "must be a 0x-prefixed EVM address");
  return getAddress(value);
}
