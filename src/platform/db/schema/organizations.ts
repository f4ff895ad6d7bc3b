import { pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

/** A tenant. `kind = wallet` organisations are created by x402 signup; their principal is the payer. */
export const organizations = pgTable(
  "organizations",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    kind: text("kind", { enum: ["standard", "wallet"] })
      .notNull()
      .default("standard"),
    walletAddress: text("wallet_address"),
    walletNetwork: text("wallet_network"),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("organizations_wallet_uq").on(t.walletNetwork, t.walletAddress)],
);
