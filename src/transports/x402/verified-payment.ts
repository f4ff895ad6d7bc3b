import type { Network } from "@x402/core/types";
import type { Address, Hex } from "viem";
import type { Price } from "../../platform/payments/prices.ts";

/** The payment behind a paid request, as verified: the wallet principal is `payer`. */
export type VerifiedPayment = {
  payer: Address;
  network: Network;
  asset: string;
  amount: string;
  price: Price;
  nonce: Hex;
};
