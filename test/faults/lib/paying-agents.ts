import { decodePaymentResponseHeader, decodePaymentSignatureHeader } from "@x402/core/http";
import type { Network } from "@x402/core/types";
import { wrapFetchWithPayment } from "@x402/fetch";
import { type Address, type Hex, isAddress, isHex } from "viem";
import type { PaymentAsset } from "../../../src/platform/payments/payment-settings.ts";
import { agentClient } from "../../lib/dev-chain.ts";

/**
 * Agents paying patchbay's /x402 routes with the official client (`@x402/fetch` over an
 * `x402Client` for the dev chain), each call recorded with the signed payment it carried, so a
 * test can hold every answer against the chain and the payments table, and send any payment
 * again verbatim. Each agent signs up once (a paid write), then reads problems (a paid read) and
 * starts an onboarding session (a paid write) every third call.
 */

/** The client gives up on a request after this long; a call past the test's bound is a hang. */
const CLIENT_TIMEOUT_MS = 30_000;

export type CallKind = "signup" | "read" | "onboard";

/** One EIP-3009 authorization as the client signed it. */
export type SentPayment = { header: string; payer: Address; nonce: Hex; value: bigint };

export type PaidCall = {
  agent: number;
  kind: CallKind;
  method: "GET" | "POST";
  url: string;
  body: string | undefined;
  /** When the call started (ms since the epoch) and how long it took, challenge included. */
  at: number;
  ms: number;
  status: number | "network";
  /** The problem's `code` and, for a refused payment, the protocol's `reason`; or what was thrown. */
  code: string | undefined;
  reason: string | undefined;
  retryAfter: string | null;
  /** Undefined when the call never sent a payment (refused before the challenge was paid). */
  payment: SentPayment | undefined;
  /** PAYMENT-RESPONSE's transaction on a 2xx. */
  transaction: string | undefined;
  replayed: boolean;
};

export type AgentChain = { network: Network; asset: PaymentAsset };

export type PayingAgents = {
  calls: PaidCall[];
  stop(): Promise<void>;
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function startPayingAgents(args: { baseUrl: string; chain: AgentChain; payers: Hex[] }): PayingAgents {
  const calls: PaidCall[] = [];
  let running = true;

  const agent = async (index: number, privateKey: Hex) => {
    const client = agentClient(args.chain, privateKey);
    let signedUp = false;
    for (let n = 0; running; n++) {
      const kind: CallKind = !signedUp ? "signup" : n % 3 === 2 ? "onboard" : "read";
      const call =
        kind === "read"
          ? await paidCall(client, index, kind, "GET", `${args.baseUrl}/x402/problems`, undefined)
          : await paidCall(client, index, kind, "POST", `${args.baseUrl}/x402/${kind}`, "{}");
      calls.push(call);
      if (kind === "signup" && (call.status === 201 || call.code === "already_signed_up")) signedUp = true;
      // A refusal that says when to come back is honoured (capped, so the agent keeps probing).
      const retryAfterMs = Number(call.retryAfter ?? "0") * 1000;
      await pause(Math.min(1_000, Math.max(100, retryAfterMs || 0)));
    }
  };

  const workers = args.payers.map((key, i) => agent(i, key));
  return {
    calls,
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}

async function paidCall(
  client: ReturnType<typeof agentClient>,
  agent: number,
  kind: CallKind,
  method: "GET" | "POST",
  url: string,
  body: string | undefined,
): Promise<PaidCall> {
  let sent: string | undefined;
  // Under the SDK's wrapper: sees the paid retry's PAYMENT-SIGNATURE, bounds each request.
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    sent = request.headers.get("payment-signature") ?? sent;
    return fetch(request, { signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) });
  };
  const pay = wrapFetchWithPayment(recording, client);
  const at = Date.now();
  const init: RequestInit = body
    ? { method, headers: { "content-type": "application/json" }, body }
    : { method };
  const base = { agent, kind, method, url, body, at };
  try {
    const res = await pay(url, init);
    return { ...base, ...(await answerOf(res, at)), payment: sent ? readPayment(sent) : undefined };
  } catch (error) {
    return {
      ...base,
      ms: Date.now() - at,
      status: "network",
      code: undefined,
      reason: error instanceof Error ? error.message : String(error),
      retryAfter: null,
      payment: sent ? readPayment(sent) : undefined,
      transaction: undefined,
      replayed: false,
    };
  }
}

/** Sends `call`'s payment again, verbatim, on the same request: what a client retrying it does. */
export async function resend(call: PaidCall): Promise<PaidCall> {
  const payment = call.payment;
  if (!payment) throw new Error("this call sent no payment");
  const at = Date.now();
  const headers: Record<string, string> = { "payment-signature": payment.header };
  if (call.body) headers["content-type"] = "application/json";
  const base = { ...call, at, payment };
  try {
    const res = await fetch(call.url, {
      method: call.method,
      headers,
      body: call.body,
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    return { ...base, ...(await answerOf(res, at)) };
  } catch (error) {
    const failed = {
      status: "network" as const,
      code: undefined,
      reason: error instanceof Error ? error.message : String(error),
      retryAfter: null,
      transaction: undefined,
    };
    return { ...base, ...failed, ms: Date.now() - at, replayed: false };
  }
}

async function answerOf(res: Response, at: number) {
  const text = await res.text();
  const ms = Date.now() - at;
  let code: string | undefined;
  let reason: string | undefined;
  if (res.headers.get("content-type")?.includes("json")) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === "object" && parsed !== null) {
        if ("code" in parsed && typeof parsed.code === "string") code = parsed.code;
        if ("reason" in parsed && typeof parsed.reason === "string") reason = parsed.reason;
      }
    } catch {
      // Not JSON after all: no code to read.
    }
  }
  const receipt = res.headers.get("payment-response");
  const transaction =
    res.status < 300 && receipt ? decodePaymentResponseHeader(receipt).transaction || undefined : undefined;
  return {
    ms,
    status: res.status,
    code,
    reason,
    retryAfter: res.headers.get("retry-after"),
    transaction,
    replayed: res.headers.get("payment-replayed") === "true",
  };
}

function readPayment(header: string): SentPayment {
  const { authorization } = decodePaymentSignatureHeader(header).payload as {
    authorization?: { from?: unknown; nonce?: unknown; value?: unknown };
  };
  const { from, nonce, value } = authorization ?? {};
  if (typeof from !== "string" || !isAddress(from) || !isHex(nonce) || typeof value !== "string")
    throw new Error("the client sent a payment that is not an EIP-3009 authorization");
  return { header, payer: from, nonce, value: BigInt(value) };
}
