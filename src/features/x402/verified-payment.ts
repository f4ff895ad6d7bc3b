import type { Network } from "@x402/core/types";
import type { Context } from "hono";
import type { Address, Hex } from "viem";
import type { AppEnv } from "../../http/env.ts";
import type { Price } from "./prices.ts";

/** The payment behind a paid request, as verified: the wallet principal is `payer`. */
export type VerifiedPayment = {
  payer: Address;
  network: Network;
  asset: string;
  amount: string;
  price: Price;
  nonce: Hex;
};

/**
 * The verified payment of the request a paid handler is serving (the context variable the gate
 * sets). Throws for a route the gate does not cover: a handler that expects a payer must never
 * run without one.
 */
export function paymentOf(c: Context<AppEnv>): VerifiedPayment {
  const payment = c.get("payment");
  if (!payment) throw new Error(`x402: ${c.req.method} ${c.req.path} is not behind the payment gate`);
  return payment;
}
