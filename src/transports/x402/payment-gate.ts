import type { HTTPProcessResult, x402HTTPResourceServer } from "@x402/core/server";
import type { PaymentRequirements } from "@x402/core/types";
import type { Context, MiddlewareHandler } from "hono";
import type { Hex } from "viem";
import { getAddress } from "viem/utils";
import { AppError } from "../../errors.ts";
import { claimOrReplay, releasingOnThrow } from "../../platform/db/claim.ts";
import type { Db } from "../../platform/db/client.ts";
import type { Logger } from "../../platform/logging/logger.ts";
import type { Payments } from "../../platform/payments/payments.ts";
import type { Price } from "../../platform/payments/prices.ts";
import type { Keyring } from "../../platform/vault/keyring.ts";
import type { AppEnv } from "../http/env.ts";
import { hashRequest } from "../http/idempotency.ts";
import { processRequest, requestContext } from "./http-adapter.ts";
import { compileRoutes, type PaidRoutes, resourceServerLoader } from "./paid-routes.ts";
import { readPaymentIdentity } from "./payment-identity.ts";
import {
  type ClaimFields,
  claimPayment,
  findPayment,
  isStaleClaim,
  type PaymentClaim,
  type PaymentRow,
  reclaimPayment,
  storedResponse,
} from "./payment-lock.ts";
import { bodyFor, challengeResponse, replayResponse } from "./payment-responses.ts";
import { type SettlementFlow, settleAndRespond } from "./payment-settlement.ts";
import type { VerifiedPayment } from "./verified-payment.ts";

/** How long a duplicate waits for the first copy of its payment before `payment_in_flight`. */
const WAIT_FOR_FIRST_MS = 30_000;

type Verified = Extract<HTTPProcessResult, { type: "payment-verified" }>;
type GateArgs = {
  payments: Payments;
  routes: PaidRoutes;
  db: Db;
  /** Seals stored answers (they may carry what is shown once). */
  keyring: Keyring;
  logger: Logger;
  /** Public base URL: the resource URL in challenges. */
  baseUrl: string;
  clock?: () => Date;
  /** Shared with the catalog; by default the gate builds its own. */
  loadServer?: () => Promise<x402HTTPResourceServer>;
};

/**
 * The x402 gate for the paid routes (DESIGN §7), on the SDK's HTTP resource server: unpaid → 402
 * challenge; paid → verify, run the handler once, settle only if it answered < 400.
 *
 * A lock on the EIP-3009 authorization (x402_payments) makes a payment single-use: copies wait
 * for the first and get its answer, copies of a settled one its stored answer, and the same
 * payment for another request is `payment_reused`. Handlers read the payment with `paymentOf(c)`.
 */
export function paymentGate(args: GateArgs): MiddlewareHandler<AppEnv> {
  const match = compileRoutes(args.routes);
  const clock = args.clock ?? (() => new Date());
  const initialized = args.loadServer ?? resourceServerLoader(args);

  return async (c, next) => {
    const matched = match(c.req.method, c.req.path);
    if (!matched) return next();
    const http = await initialized();
    const price = args.payments.prices[matched.route.price];
    const header = c.req.header("payment-signature");
    const read = header ? readPaymentIdentity(header) : undefined;
    if (!read?.ok) {
      // No payment, or one that could not be locked: a challenge, never the handler nor the facilitator.
      const result = await processRequest(http, requestContext(c, args.baseUrl, { hidePayment: true }));
      if (result.type !== "payment-error") throw new Error("x402: a paid route required no payment");
      return challengeResponse(c, result.response, {
        price,
        paid: header !== undefined,
        problem: read?.problem,
      });
    }
    return runOnce({ c, next, http, args, clock, matched, identity: read.identity, price });
  };
}

/** One paid request on its way through the gate: what settling needs, and the gate's own. */
type Flow = SettlementFlow & {
  next: () => Promise<void>;
  args: GateArgs;
  clock: () => Date;
  price: Price;
};

type Won =
  | { claim: PaymentClaim; verified: Verified }
  | { claim: PaymentClaim; held: PaymentRow; requirements: PaymentRequirements }
  | Response;

/**
 * The lock's state machine; see the x402_payments schema for the states.
 *
 * The facilitator's verification starts first. The claim is taken while it is under way, so its
 * commit costs nothing on top of verifying: a new payment's row is inserted at once (the lock is
 * read only when the key has one), then the verification is awaited, and a payment that does not
 * verify gives its row back. Until its answer is written a row holds no requirements: a different
 * payment naming the same nonce waits for it (a forged header holds the row while the facilitator
 * refuses it; a refused request stops waiting), and takes over such a claim gone stale once it
 * verifies itself. A copy of a settled payment gets the stored answer without waiting for its
 * verification (its spent nonce fails it anyway); a held (`failed`) answer settles with the
 * requirements stored with it.
 */
async function runOnce(flow: Flow): Promise<Response | undefined> {
  const { args, identity } = flow;
  const lock = { db: args.db, keyring: args.keyring, key: identity.key };
  const verification = startVerification(flow);
  let won: Won | undefined;
  try {
    const requestHash = await hashRequest(flow.c);
    const fields = (now: Date): ClaimFields => ({
      paymentHash: identity.paymentHash,
      requestHash,
      route: flow.matched.pattern,
      amount: identity.amount,
      expiresAt: recordExpiry(identity.validBefore, now),
    });
    const held = await claimOrReplay<PaymentRow, Won, Response>({
      waitMs: WAIT_FOR_FIRST_MS,
      clock: flow.clock,
      takeFirst: true,
      read: () => findPayment(lock),
      judge: (row, now) => {
        const another = row.paymentHash !== identity.paymentHash;
        const unanswered = row.state === "in_flight" && row.requirements === null;
        if (another && unanswered) {
          // Another authorization's claim, which may never verify: decided once it answers, or
          // taken over when abandoned, by a payment that verifies (take).
          if (isStaleClaim(row, now)) return "take";
          const refused = verification.refusal();
          if (refused) return { replay: refused };
          return "wait";
        }
        if (another || row.requestHash !== requestHash) {
          throw new AppError(
            "payment_reused",
            "This payment authorization was already used for another request; sign a new payment for this one.",
          );
        }
        if (row.state === "settled") return { replay: replayResponse(storedResponse(row, args.keyring)) };
        return row.state === "failed" || isStaleClaim(row, now) ? "take" : "wait";
      },
      take: async (row, now) => {
        if (row?.state === "failed") {
          // The handler already answered; its result is held until this payment settles, with
          // the requirements stored with it (or, written without them, this verification's).
          let requirements = row.requirements as unknown as PaymentRequirements | null;
          if (requirements === null) {
            const verified = await verification.result;
            if (verified instanceof Response) return verified;
            requirements = verified.paymentRequirements;
          }
          const claim = await reclaimPayment(lock, row, now);
          return claim && { claim, held: row, requirements };
        }
        if (row) {
          // A claim abandoned by a dead process: taken over only by a payment that verifies.
          const verified = await verification.result;
          if (verified instanceof Response) return verified;
          const claim = await reclaimPayment(lock, row, now, fields(now));
          return claim && { claim, verified };
        }
        const claim = await claimPayment(lock, fields(now), now);
        if (!claim) return undefined;
        // A payment that does not verify gives its claim back.
        const verified = await releasingOnThrow(
          () => giveBack(claim, args.logger),
          () => verification.result,
        );
        if (verified instanceof Response) {
          await giveBack(claim, args.logger);
          return verified;
        }
        return { claim, verified };
      },
      inFlight: () =>
        new AppError(
          "payment_in_flight",
          "This payment is still being processed; retry shortly for its result.",
        ),
    });
    if ("replay" in held) return held.replay;
    won = held.claim;
  } finally {
    // Unless it goes on to the handler, this request gives its verification up, without waiting.
    const runsHandler = won !== undefined && !(won instanceof Response) && "verified" in won;
    if (!runsHandler) verification.abandon(args.logger);
  }
  if (won instanceof Response) return won;
  if ("verified" in won) return runHandler(flow, won.verified, won.claim);
  return settleAndRespond(flow, {
    claim: won.claim,
    requirements: won.requirements,
    response: storedResponse(won.held, args.keyring),
    live: undefined,
  });
}

/**
 * Gives a claim back whose payment did not verify. The request's own outcome (the refusal, or the
 * facilitator's outage) is what the client gets: a release that fails (the database away) is
 * logged, and its row goes stale after 10 minutes, when a payment that verifies takes it over.
 */
async function giveBack(claim: PaymentClaim, logger: Logger): Promise<void> {
  await claim
    .release()
    .catch((error: unknown) =>
      logger.warn({ err: error }, "x402: the claim of a payment that did not verify could not be given back"),
    );
}

/** The facilitator's verification of this request's payment, started once, used or abandoned. */
type Verification = {
  /** Rejects as `verifyPayment` does (an outage is 503); only awaited where it is used. */
  result: Promise<Verified | Response>;
  /**
   * Not used: a payment that verified is cancelled through the SDK's dispatcher (a scheme may
   * hold something for a verified payment until it settles or is cancelled); a refusal needs
   * nothing; an error (an outage, or one already thrown to the client) is only logged. Returns
   * at once: nothing waits for the facilitator's answer.
   */
  abandon(logger: Logger): void;
  /** The refusal (402), once the facilitator has refused the payment; else undefined. */
  refusal(): Response | undefined;
};

function startVerification(flow: Flow): Verification {
  const result = verifyPayment(flow);
  let refused: Response | undefined;
  // Handled here too: a verification nobody awaits (a replay, a held answer) must not go unhandled.
  result.then(
    (verified) => {
      if (verified instanceof Response) refused = verified;
    },
    () => undefined,
  );
  return {
    result,
    refusal: () => refused,
    abandon(logger) {
      result
        .then((verified) =>
          verified instanceof Response
            ? undefined
            : verified.cancellationDispatcher.cancel({ reason: "after_verify_aborted" }),
        )
        .catch((error: unknown) =>
          logger.debug({ err: error }, "x402: a payment verification given up ended in an error"),
        );
    },
  };
}

async function verifyPayment(flow: Flow): Promise<Verified | Response> {
  const result = await processRequest(flow.http, requestContext(flow.c, flow.args.baseUrl));
  if (result.type === "payment-verified") return result;
  if (result.type === "payment-error")
    return challengeResponse(flow.c, result.response, { price: flow.price, paid: true });
  throw new Error("x402: a paid route required no payment");
}

async function runHandler(
  flow: Flow,
  verified: Verified,
  claim: PaymentClaim,
): Promise<Response | undefined> {
  const { c, identity } = flow;
  const { network, asset, amount } = verified.paymentRequirements;
  const { payer, nonce } = identity.key;
  c.set("payment", {
    payer: getAddress(payer),
    network,
    asset,
    amount,
    price: flow.price,
    nonce: nonce as Hex,
  });
  await releasingOnThrow(async (error) => {
    await verified.cancellationDispatcher.cancel({ reason: "handler_threw", error });
    await claim.release();
  }, flow.next);
  const res = c.res;
  if (res.status >= 400) {
    // Nothing is charged for a refusal or a failure, and nothing is held: the payment is free.
    await verified.cancellationDispatcher.cancel({ reason: "handler_failed", responseStatus: res.status });
    await claim.release();
    return undefined;
  }
  // The answer's body is sealed for storing while settlement waits on the chain, not after it.
  const body = await res.text();
  const live = new Response(bodyFor(res.status, body), {
    status: res.status,
    headers: res.headers,
  });
  setImmediate(() => claim.prepare(body));
  return settleAndRespond(flow, {
    claim,
    requirements: verified.paymentRequirements,
    response: undefined,
    live,
    declaredExtensions: verified.declaredExtensions,
  });
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** A day past validBefore (its nonce can no longer settle), which the payer picks: capped at a week. */
function recordExpiry(validBefore: number, now: Date): Date {
  const cap = now.getTime() + 7 * DAY_MS;
  return new Date(Math.min(validBefore * 1000, cap) + DAY_MS);
}

/** The verified payment of a paid request; throws off the gate, so a handler never runs without one. */
export function paymentOf(c: Context<AppEnv>): VerifiedPayment {
  const payment = c.get("payment");
  if (!payment) throw new Error(`x402: ${c.req.method} ${c.req.path} is not behind the payment gate`);
  return payment;
}
