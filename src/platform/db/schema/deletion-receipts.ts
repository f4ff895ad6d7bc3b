import { integer, pgTable, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";

/** Short-lived, single-use confirmations from a deletion preview. Only a hash of the receipt is kept. */
export const deletionReceipts = pgTable("deletion_receipts", {
  receiptHash: text("receipt_hash").primaryKey(),
  organizationId: text("organization_id").notNull(),
  connectionId: text("connection_id").notNull(),
  connectionRevision: integer("connection_revision").notNull(),
  expiresAt: millis("expires_at").notNull(),
  usedAt: millis("used_at"),
});
