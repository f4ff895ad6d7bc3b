import { describe, expect, test } from "vitest";
import { ConfigError } from "../../config-error.ts";
import { readPaymentSettings } from "./payment-settings.ts";
import { readPrices, usdToAtomic } from "./prices.ts";

const payTo = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

describe("payment settings", () => {
  test("development runs the dev chain on 8545 unless it is turned off; test and production do not", () => {
    expect(readPaymentSettings({}, "development").devChain).toEqual({ port: 8545 });
    expect(readPaymentSettings({ PATCHBAY_DEV_CHAIN_PORT: "9545" }, "development").devChain).toEqual({
      port: 9545,
    });
    expect(readPaymentSettings({ PATCHBAY_DEV_CHAIN: "off" }, "development").devChain).toBeUndefined();
    expect(readPaymentSettings({}, "test").devChain).toBeUndefined();
    expect(readPaymentSettings({}, "production").devChain).toBeUndefined();
    expect(() => readPaymentSettings({ PATCHBAY_DEV_CHAIN: "on" }, "production")).toThrow(ConfigError);
    expect(() => readPaymentSettings({ PATCHBAY_DEV_CHAIN: "maybe" }, "development")).toThrow(/on or off/);
  });

  test("a facilitator URL means a remote facilitator, with a network and a payee, and no chain", () => {
    const settings = readPaymentSettings(
      {
        PATCHBAY_X402_FACILITATOR_URL: "https://facilitator.example",
        PATCHBAY_X402_NETWORK: "eip155:8453",
        PATCHBAY_X402_PAY_TO: payTo.toLowerCase(),
      },
      "production",
    );
    expect(settings.devChain).toBeUndefined();
    expect(settings.remote).toEqual({
      facilitatorUrl: "https://facilitator.example",
      network: "eip155:8453",
      payTo,
      asset: undefined,
    });
    const base = { PATCHBAY_X402_FACILITATOR_URL: "https://f.example", PATCHBAY_X402_PAY_TO: payTo };
    expect(() => readPaymentSettings(base, "production")).toThrow(/PATCHBAY_X402_NETWORK/);
    expect(() => readPaymentSettings({ ...base, PATCHBAY_X402_NETWORK: "solana:1" }, "production")).toThrow(
      /PATCHBAY_X402_NETWORK/,
    );
    expect(() =>
      readPaymentSettings(
        { ...base, PATCHBAY_X402_NETWORK: "eip155:8453", PATCHBAY_X402_FACILITATOR_URL: "http://f.example" },
        "production",
      ),
    ).toThrow(/https/);
    expect(() =>
      readPaymentSettings(
        { PATCHBAY_X402_FACILITATOR_URL: "https://f.example", PATCHBAY_X402_NETWORK: "eip155:1" },
        "test",
      ),
    ).toThrow(/PATCHBAY_X402_PAY_TO/);
  });

  test("prices default by class and are overridden in dollars, exactly", () => {
    const prices = readPrices("read=0.005, remediation=$3");
    expect(prices.read).toEqual({ usd: "0.005", atomic: 5_000n });
    expect(prices.remediation).toEqual({ usd: "3", atomic: 3_000_000n });
    expect(prices.signup).toEqual({ usd: "0.05", atomic: 50_000n });
    expect(prices.instrumentation.atomic).toBe(2_000_000n);
    expect(usdToAtomic("0.000001")).toBe(1n);
    expect(() => readPrices("read=0.0000001")).toThrow(/at most 6 decimals/);
    expect(() => readPrices("read=0")).toThrow(ConfigError);
    expect(() => readPrices("remediation=5000")).toThrow(/at most 1000/);
    expect(() => readPrices("lunch=1")).toThrow(/keys: read, signup/);
  });
});
