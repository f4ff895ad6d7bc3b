import { index, integer, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";

/**
 * One row per x402 payment authorization: the lock that keeps a duplicated payment from running
 * a paid handler twice, and the record that replays a settled payment's result instead of
 * charging again (src/transports/x402/payment-gate.ts).
 *
 * Keyed like the token contract keys it: an EIP-3009 nonce is unique per (token, authorizer),
 * so the key is (network, asset, payer, nonce), addresses and nonce lowercase.
 *
 * - `in_flight`: the payment is being verified, or the handler (or a settlement) is running, under
 *   `claim_id`;
 * - `settled`: paid; `response_*` is what a replay returns;
 * - `failed`: the handler answered < 400 but settlement did not complete; `response_*` is held
 *   until the same payment settles on a retry — the work is not done twice.
 * A handler answer ≥ 400 deletes the row: nothing was charged and nothing needs holding.
 */
export const x402Payments = pgTable(
  "x402_payments",
  {
    network: text("network").notNull(),
    asset: text("asset").notNull(),
    payer: text("payer").notNull(),
    nonce: text("nonce").notNull(),
    /** SHA-256 of the canonical signed payment: a replay must be this exact payment. */
    paymentHash: text("payment_hash").notNull(),
    /** SHA-256 of method, path, query and body: a replay must be this exact request. */
    requestHash: text("request_hash").notNull(),
    /** The paid route's pattern, e.g. `POST /x402/signup`. */
    route: text("route").notNull(),
    /** The amount the payment accepted: once it verified, equal to its requirements' (the SDK matches it exactly). */
    amount: text("amount").notNull(),
    /**
     * The payment requirements the payment was verified against, written with the handler's
     * answer (a held answer settles with them). Null while the claim is in flight: it is taken
     * while the facilitator verifies (src/transports/x402/payment-gate.ts).
     */
    requirements: jsonb("requirements").$type<Record<string, unknown>>(),
    state: text("state", { enum: ["in_flight", "settled", "failed"] }).notNull(),
    claimId: text("claim_id").notNull(),
    transaction: text("transaction"),
    responseStatus: integer("response_status"),
    responseHeaders: jsonb("response_headers").$type<Record<string, string>>(),
    responseBody: text("response_body"),
    claimedAt: millis("claimed_at").notNull(),
    createdAt: millis("created_at").notNull().defaultNow(),
    /** A day past the authorization's validBefore (capped at a week from first use): then swept. */
    expiresAt: millis("expires_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.network, t.asset, t.payer, t.nonce] }),
    index("x402_payments_expiry_idx").on(t.expiresAt),
  ],
);
