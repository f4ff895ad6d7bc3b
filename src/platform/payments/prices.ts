import { ConfigError } from "../../config-error.ts";

/** Price classes of the paid routes (DESIGN §7); `PATCHBAY_X402_PRICES` overrides any of them. */
const priceKeys = ["read", "signup", "onboard", "diagnose", "instrumentation", "remediation"] as const;
export type PriceKey = (typeof priceKeys)[number];

/** A price in US dollars, kept as the decimal the operator wrote and as USDC atomic units. */
export type Price = { usd: string; atomic: bigint };
export type Prices = Readonly<Record<PriceKey, Price>>;

const USDC_DECIMALS = 6;

const defaults: Record<PriceKey, string> = {
  read: "0.01",
  signup: "0.05",
  onboard: "0.05",
  diagnose: "0.10",
  instrumentation: "2.00",
  remediation: "5.00",
};

/** Generous ceiling: a typo such as `remediation=5000` should fail at start, not at an agent. */
const MAX_USD = 1_000n;

/** Parses `PATCHBAY_X402_PRICES`: comma-separated `key=dollars` (e.g. `read=0.005,remediation=$3`). */
export function readPrices(raw: string | undefined): Prices {
  const chosen: Record<string, string> = { ...defaults };
  for (const pair of (raw ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [key, value] = pair.split("=").map((s) => s.trim());
    if (!key || value === undefined || !(priceKeys as readonly string[]).includes(key)) {
      throw new ConfigError(
        "PATCHBAY_X402_PRICES",
        `"${pair}" is not <key>=<dollars>; keys: ${priceKeys.join(", ")}`,
      );
    }
    chosen[key] = value;
  }
  const prices = {} as Record<PriceKey, Price>;
  for (const key of priceKeys) {
    const usd = chosen[key] ?? defaults[key];
    const atomic = usdToAtomic(usd);
    if (atomic === undefined || atomic <= 0n || atomic > MAX_USD * 10n ** BigInt(USDC_DECIMALS)) {
      throw new ConfigError(
        "PATCHBAY_X402_PRICES",
        `${key}=${usd} must be a dollar amount above 0 and at most ${MAX_USD}, with at most ${USDC_DECIMALS} decimals`,
      );
    }
    prices[key] = { usd: usd.replace(/^\$/, ""), atomic };
  }
  return prices;
}

/** Exact decimal → atomic units, no floating point: "0.01" → 10000n. */
export function usdToAtomic(usd: string): bigint | undefined {
  const match = /^\$?(\d{1,9})(?:\.(\d{1,6}))?$/.exec(usd);
  if (!match?.[1]) return undefined;
  const fraction = (match[2] ?? "").padEnd(USDC_DECIMALS, "0");
  return BigInt(match[1]) * 10n ** BigInt(USDC_DECIMALS) + BigInt(fraction);
}

/** "$0.01" for messages and catalogs. */
export const formatUsd = (price: Price): string => `$${price.usd}`;
