import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
} from "@x402/core/http";
import type { HTTPResponseInstructions } from "@x402/core/server";
import type { Context } from "hono";
import { AppError } from "../../errors.ts";
import type { StoredResponse } from "../../platform/db/claim.ts";
import { formatUsd, type Price } from "../../platform/payments/prices.ts";
import { toProblem } from "../http/problem.ts";

/** Headers of a paid answer worth replaying; the rest is regenerated per response. */
export const replayedHeaders = ["content-type", "etag", "location", "payment-response"];

/**
 * The SDK's 402 (challenge in `PAYMENT-REQUIRED`) with a problem+json body: `payment_required`,
 * or `payment_invalid` with the protocol's reason code. A browser keeps the SDK's paywall page.
 */
export function challengeResponse(
  c: Context,
  instructions: HTTPResponseInstructions,
  args: {
    price: Price;
    paid: boolean;
    /** What is wrong with a payment that was never sent to the facilitator (it names the field). */
    problem?: string | undefined;
  },
): Response {
  const headers = new Headers(instructions.headers);
  if (instructions.isHtml)
    return new Response(String(instructions.body ?? ""), { status: instructions.status, headers });
  const reason = args.paid ? sanitizeChallenge(headers) : undefined;
  const error = args.paid
    ? new AppError(
        "payment_invalid",
        `The payment was refused (${reason ?? "invalid_payment"}${args.problem ? `: ${args.problem}` : ""}); nothing was charged. Sign a new payment for the requirements in the PAYMENT-REQUIRED header.`,
        { reason: reason ?? "invalid_payment", price: formatUsd(args.price) },
      )
    : new AppError(
        "payment_required",
        `This call costs ${formatUsd(args.price)} in USDC via x402; the PAYMENT-REQUIRED header holds the payment requirements.`,
        { price: formatUsd(args.price) },
      );
  return problemOver(c, error, headers, instructions.status);
}

export const paymentsUnavailable = () =>
  new AppError(
    "payments_unavailable",
    "Payments are unavailable on this server right now; paid routes cannot be called.",
  );

/** How long a client should wait before sending a payment again while the facilitator is away. */
const FACILITATOR_RETRY_AFTER_SECONDS = 2;

/** The facilitator (or the chain behind it) did not answer before the handler ran: nothing moved. */
export const facilitatorUnavailable = () =>
  new AppError(
    "payments_unavailable",
    "The payment facilitator cannot be reached right now; nothing was charged. Send the same payment again after Retry-After.",
    { retryAfterSeconds: FACILITATOR_RETRY_AFTER_SECONDS },
  );

/**
 * Settlement's outcome is unknown and the answer is held: the client must send the same payment
 * again, never a new one (which would run the route again and could be charged twice).
 */
export const settlementUnknown = () =>
  new AppError(
    "payments_unavailable",
    "The payment could not be confirmed yet; the result is held. Send the same payment again after Retry-After to receive it (it is charged at most once); do not sign a new one.",
    { retryAfterSeconds: FACILITATOR_RETRY_AFTER_SECONDS },
  );

/** Settlement did not go through: a 402 carrying the SDK's failure receipt (reason code only). */
export function settlementFailedResponse(c: Context, receiptHeaders: Record<string, string>): Response {
  const headers = new Headers(receiptHeaders);
  const reason = sanitizeReceipt(headers);
  const error = new AppError(
    "payment_failed",
    `The payment did not settle (${reason}); nothing was charged. The result is held: send the same payment again to receive it once it settles.`,
    { reason },
  );
  return problemOver(c, error, headers, 402);
}

/** `error` as problem+json over the SDK's own headers (its challenge or its receipt). */
function problemOver(c: Context, error: AppError, headers: Headers, status: number): Response {
  headers.set("content-type", "application/problem+json");
  const requestId: unknown = c.get("requestId");
  const body = toProblem(error, typeof requestId === "string" ? requestId : "unknown");
  return new Response(JSON.stringify(body), { status, headers });
}

/** A settled payment's stored answer, marked as a replay: no second charge, no second run. */
export function replayResponse(stored: StoredResponse): Response {
  const headers = new Headers(stored.headers);
  headers.set("payment-replayed", "true");
  headers.set("cache-control", "private, no-store");
  return new Response(bodyFor(stored.status, stored.body), { status: stored.status, headers });
}

/** The SDK sometimes fills reason codes from thrown messages: anything but a code is replaced. */
const isReasonCode = (value: unknown): value is string =>
  typeof value === "string" && /^[a-z0-9_]{1,80}$/.test(value);

/** Rewrites PAYMENT-REQUIRED's `error` to a reason code if needed; returns that code. */
function sanitizeChallenge(headers: Headers): string {
  const header = headers.get("payment-required");
  if (!header) return "invalid_payment";
  try {
    const challenge = decodePaymentRequiredHeader(header);
    if (isReasonCode(challenge.error)) return challenge.error;
    headers.set("payment-required", encodePaymentRequiredHeader({ ...challenge, error: "invalid_payment" }));
  } catch {
    headers.delete("payment-required");
  }
  return "invalid_payment";
}

/** Rewrites PAYMENT-RESPONSE to carry a reason code and no message; returns that code. */
function sanitizeReceipt(headers: Headers): string {
  const header = headers.get("payment-response");
  if (!header) return "settlement_failed";
  try {
    const { errorMessage: _, ...receipt } = decodePaymentResponseHeader(header);
    const reason = isReasonCode(receipt.errorReason) ? receipt.errorReason : "settlement_failed";
    headers.set("payment-response", encodePaymentResponseHeader({ ...receipt, errorReason: reason }));
    return reason;
  } catch {
    headers.delete("payment-response");
    return "settlement_failed";
  }
}

/** Fetch's null body statuses below 400 (204, 205, 304): a `Response` with any body, even "", throws. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** `body` as a `Response` may carry it for `status`. */
export const bodyFor = (status: number, body: string): string | null =>
  NULL_BODY_STATUSES.has(status) ? null : body;
