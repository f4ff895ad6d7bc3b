import { index, pgTable, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";

/**
 * Sign-in-with-X challenges (x402's `sign-in-with-x` extension, CAIP-122) issued on the free
 * /x402 reads (features/agent-onboarding/wallet-sign-in.ts). A wallet's signature is accepted only
 * over a nonce issued here, for the same URI and network, before `expires_at`, and once: `used_at`
 * is set by the sign-in that consumes it, so a replayed signature is refused. Rows past
 * `expires_at` can never be accepted again and are swept hourly.
 */
export const siwxNonces = pgTable(
  "siwx_nonces",
  {
    /** 128 random bits, hex: EIP-4361 wants an alphanumeric nonce. */
    nonce: text("nonce").primaryKey(),
    /** The resource the challenge was issued for (`{baseUrl}/x402/…`); the signed `uri` must be it. */
    uri: text("uri").notNull(),
    /** CAIP-2 network offered (`eip155:…`); the signed `chainId` must be it. */
    network: text("network").notNull(),
    issuedAt: millis("issued_at").notNull(),
    expiresAt: millis("expires_at").notNull(),
    usedAt: millis("used_at"),
  },
  (t) => [index("siwx_nonces_expiry_idx").on(t.expiresAt)],
);
