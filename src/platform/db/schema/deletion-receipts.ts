import { integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";

/** Short-lived, single-use confirmations from a deletion preview. Only a hash of the receipt is kept. */
export const deletionReceipts = pgTable("deletion_receipts", {
  receiptHash: text("receipt_hash").primaryKey(),
  organizationId: text("organization_id").notNull(),
  connectionId: text("connection_id").notNull(),
  connectionRevision: integer("connection_revision").notNull(),
  expiresAt: timestamp("expires_at", { withTimezone: true, precision: 3 }).notNull(),
  usedAt: timestamp("used_at", { withTimezone: true, precision: 3 }),
});
