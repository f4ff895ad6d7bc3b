import { createHash } from "node:crypto";
import { decodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import canonicalize from "canonicalize";
import { z } from "zod";
import type { PaymentKey } from "./payment-lock.ts";

/** What identifies one signed payment: its lock key, its exact content, and its deadline. */
export type PaymentIdentity = {
  payload: PaymentPayload;
  key: PaymentKey;
  paymentHash: string;
  /** The authorization's validBefore (seconds since the epoch). */
  validBefore: number;
  /** The amount `accepted` names (atomic units); the SDK's match makes it the route's. */
  amount: string;
};

/** A lockable payment, or what is wrong with the header (named by field) for the 402 the client gets. */
export type PaymentRead = { ok: true; identity: PaymentIdentity } | { ok: false; problem: string };

const decimal = /^\d+$/;
const MAX_UINT256 = 2n ** 256n - 1n;
/** A uint256 as EIP-3009 signs it: anything else makes the facilitator's BigInt or ABI encoding throw. */
const uint256 = z
  .string({ error: "must be a non-negative decimal integer string" })
  // abort: BigInt must never see a non-decimal string.
  .regex(decimal, { error: "must be a non-negative decimal integer string", abort: true })
  .refine((value) => BigInt(value) <= MAX_UINT256, "must fit in a uint256");
/** A string matching `pattern`, one message for either failure. */
const matching = (pattern: RegExp, message: string) => z.string({ error: message }).regex(pattern, message);
const address = matching(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte hex address");

/**
 * The v2 `exact` EIP-3009 payment the gate can lock. The facilitator throws on a field it cannot
 * parse, which would read as an outage (503) any client could fake: the shape is checked first.
 * Unknown keys are kept; the SDK matches `accepted` against the requirements itself.
 */
const LockablePayment = z.looseObject(
  {
    x402Version: z.literal(2, { error: "must be 2" }),
    accepted: z.looseObject(
      {
        // Stored with the claim (network and asset in its key), which is taken before the SDK
        // matches `accepted`: nothing PostgreSQL would refuse reaches it.
        network: matching(/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/, "must be a CAIP-2 network id"),
        asset: address,
        amount: uint256,
      },
      { error: "must be an object" },
    ),
    payload: z.looseObject(
      {
        signature: matching(/^0x(?:[0-9a-fA-F]{2})+$/, "must be a 0x-prefixed hex string"),
        authorization: z.looseObject(
          {
            from: address,
            to: address,
            value: uint256,
            validAfter: uint256,
            // Also the lock record's expiry, so it must be a usable number of seconds.
            validBefore: uint256.refine(
              (value) => Number.isSafeInteger(Number(value)),
              "must be a Unix time in seconds",
            ),
            nonce: matching(/^0x[0-9a-fA-F]{64}$/, "must be 0x and 64 hex digits"),
          },
          { error: "must be an EIP-3009 authorization object" },
        ),
      },
      { error: "must be an object" },
    ),
  },
  { error: "must be a JSON object" },
);

/**
 * Reads the EIP-3009 authorization out of a `PAYMENT-SIGNATURE` header. A malformed one could not
 * be locked, so it never reaches a handler or the facilitator: 402 `payment_invalid` with `problem`.
 */
export function readPaymentIdentity(header: string): PaymentRead {
  let decoded: unknown;
  try {
    decoded = decodePaymentSignatureHeader(header);
  } catch {
    return { ok: false, problem: "the header is not base64-encoded JSON" };
  }
  const parsed = LockablePayment.safeParse(decoded);
  if (!parsed.success) return { ok: false, problem: describe(parsed.error) };
  const { accepted, payload } = parsed.data;
  const { from, nonce, validBefore } = payload.authorization;
  // The payment as sent (every key kept), for the SDK to verify and settle.
  const sent = decoded as PaymentPayload;
  // Canonical JSON, so the same payment re-encoded (another key order) is still the same.
  // canonicalize throws on what it cannot encode canonically, such as a lone surrogate.
  let canonical: string;
  try {
    canonical = canonicalize({ accepted: sent.accepted, payload: sent.payload }) ?? "";
  } catch {
    return { ok: false, problem: "the payment holds a string that is not valid Unicode" };
  }
  return {
    ok: true,
    identity: {
      payload: sent,
      key: {
        network: accepted.network,
        asset: accepted.asset.toLowerCase(),
        payer: from.toLowerCase(),
        nonce: nonce.toLowerCase(),
      },
      paymentHash: sha256(canonical),
      validBefore: Number(validBefore),
      amount: accepted.amount,
    },
  };
}

/** The first issue, as `payload.authorization.value must be …`. */
function describe(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "the payment is malformed";
  const path = issue.path.map(String).join(".");
  return path ? `${path} ${issue.message}` : `the payment ${issue.message}`;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
