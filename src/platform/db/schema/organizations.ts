import { pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";

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
    createdAt: millis("created_at").notNull().defaultNow(),
  },
  (t) => [uniqueIndex("organizations_wallet_uq").on(t.walletNetwork, t.walletAddress)],
);

/** The organisation a row belongs to: deleting the organisation deletes the row. */
export const organizationRef = () =>
  text("organization_id")
    .notNull()
    .references(() => organizations.id, { onDelete: "cascade" });
