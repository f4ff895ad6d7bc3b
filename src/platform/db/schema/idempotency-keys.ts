import { index, integer, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";

/**
 * One row per (organisation, Idempotency-Key). `in_flight` claims the key; `completed` holds the
 * response to replay. Only successful responses are kept (see src/platform/db/claim.ts).
 */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    organizationId: text("organization_id").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    state: text("state", { enum: ["in_flight", "completed"] }).notNull(),
    responseStatus: integer("response_status"),
    responseHeaders: jsonb("response_headers").$type<Record<string, string>>(),
    responseBody: text("response_body"),
    createdAt: millis("created_at").notNull().defaultNow(),
    expiresAt: millis("expires_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.key] }),
    index("idempotency_keys_expiry_idx").on(t.expiresAt),
  ],
);
