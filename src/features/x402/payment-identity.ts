import { createHash } from "node:crypto";
import { decodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import canonicalize from "canonicalize";
import type { Context } from "hono";
import type { PaymentKey } from "./payment-lock.ts";

/** What identifies one signed payment: its lock key, its exact content, and its deadline. */
export type PaymentIdentity = {
  payload: PaymentPayload;
  key: PaymentKey;
  paymentHash: string;
  /** The authorization's validBefore (seconds since the epoch). */
  validBefore: number;
};

const hex32 = /^0x[0-9a-fA-F]{64}$/;
const address = /^0x[0-9a-fA-F]{40}$/;

/**
 * Reads the EIP-3009 authorization out of a `PAYMENT-SIGNATURE` header. Undefined when the
 * header is not a v2 `exact` EIP-3009 payment (the SDK then answers it with a 402); such a
 * payment could not be locked, so it must never reach a handler.
 */
export function readPaymentIdentity(header: string): PaymentIdentity | undefined {
  let payload: PaymentPayload;
  try {
    payload = decodePaymentSignatureHeader(header);
  } catch {
    return undefined;
  }
  const authorization = (payload.payload as { authorization?: Record<string, unknown> } | undefined)
    ?.authorization;
  const from = authorization?.from;
  const nonce = authorization?.nonce;
  const validBefore = Number(authorization?.validBefore);
  if (
    payload.x402Version !== 2 ||
    typeof payload.accepted?.asset !== "string" ||
    typeof from !== "string" ||
    !address.test(from) ||
    typeof nonce !== "string" ||
    !hex32.test(nonce) ||
    !Number.isSafeInteger(validBefore)
  ) {
    return undefined;
  }
  return {
    payload,
    key: {
      network: payload.accepted.network,
      asset: payload.accepted.asset.toLowerCase(),
      payer: from.toLowerCase(),
      nonce: nonce.toLowerCase(),
    },
    // Canonical JSON, so the same payment re-encoded (another key order) is still the same.
    paymentHash: sha256(canonicalize({ accepted: payload.accepted, payload: payload.payload }) ?? ""),
    validBefore,
  };
}

/** Method, path, query and the exact body bytes: any difference is a different request. */
export async function hashRequest(c: Context): Promise<string> {
  const url = new URL(c.req.url);
  const body = c.req.method === "GET" || c.req.method === "HEAD" ? "" : await c.req.text();
  return sha256(`${c.req.method === "HEAD" ? "GET" : c.req.method}\n${url.pathname}${url.search}\n${body}`);
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
