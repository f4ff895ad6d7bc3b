import { sql } from "drizzle-orm";
import { bigserial, boolean, index, integer, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { organizationRef } from "./organizations.ts";

/**
 * An organisation's webhook endpoint (docs/webhooks.md). The signing secret is sealed like a
 * connection credential (platform/vault envelope, bound to the endpoint and `secretVersion`):
 * the columns hold only its sealed form.
 */
export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: text("id").primaryKey(),
    organizationId: organizationRef(),
    url: text("url").notNull(),
    description: text("description").notNull().default(""),
    eventTypes: text("event_types").array().notNull(),
    enabled: boolean("enabled").notNull().default(true),
    /** Why it is disabled: `manual`, or `failing` (the automatic rule) — null while enabled. */
    disabledReason: text("disabled_reason"),
    disabledAt: millis("disabled_at"),
    /** Deliveries that ended failed in a row (every attempt spent); a success resets it. */
    failedDeliveriesInRow: integer("failed_deliveries_in_row").notNull().default(0),
    lastSuccessAt: millis("last_success_at"),
    lastFailureAt: millis("last_failure_at"),
    secretVersion: integer("secret_version").notNull().default(1),
    secretKekVersion: integer("secret_kek_version").notNull(),
    secretWrappedKey: text("secret_wrapped_key").notNull(),
    secretWrapIv: text("secret_wrap_iv").notNull(),
    secretIv: text("secret_iv").notNull(),
    secretCiphertext: text("secret_ciphertext").notNull(),
    secretRotatedAt: millis("secret_rotated_at"),
    revision: integer("revision").notNull().default(1),
    createdAt: millis("created_at").notNull().defaultNow(),
    updatedAt: millis("updated_at").notNull().defaultNow(),
  },
  (t) => [index("webhook_endpoints_org_idx").on(t.organizationId, t.createdAt, t.id)],
);

export const webhookDeliveryStatuses = ["pending", "succeeded", "failed"] as const;
export type WebhookDeliveryStatus = (typeof webhookDeliveryStatuses)[number];

/**
 * One event for one endpoint: the outbox row. Emitters insert it in their own transaction (or
 * statement); the dispatcher hands rows with `queued_at` null to the job queue.
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    organizationId: organizationRef(),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    /** `webhook-id`: the same for every attempt and for a redelivery of this message. */
    messageId: text("message_id").notNull(),
    eventType: text("event_type").notNull(),
    /** The whole signed body: `{ type, timestamp, data }`. */
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull(),
    status: text("status", { enum: webhookDeliveryStatuses }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: millis("next_attempt_at"),
    /** When the dispatcher sent its first job; null = still in the outbox. */
    queuedAt: millis("queued_at"),
    /** The delivery this one redelivers. */
    redeliveryOf: text("redelivery_of"),
    createdAt: millis("created_at").notNull().defaultNow(),
    finishedAt: millis("finished_at"),
  },
  (t) => [
    index("webhook_deliveries_endpoint_idx").on(t.endpointId, t.createdAt, t.id),
    index("webhook_deliveries_outbox_idx").on(t.createdAt).where(sql`${t.queuedAt} is null`),
  ],
);

/** One HTTP attempt of a delivery: the delivery log's "last answers". */
export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    attempt: integer("attempt").notNull(),
    attemptedAt: millis("attempted_at").notNull(),
    durationMs: integer("duration_ms").notNull(),
    /** The receiver's HTTP status; null when no answer came (egress refusal, network, timeout). */
    responseStatus: integer("response_status"),
    /** At most 1 KiB of the answer's body, as text. */
    responseBodyExcerpt: text("response_body_excerpt"),
    errorCode: text("error_code"),
    succeeded: boolean("succeeded").notNull(),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId, t.attempt)],
);

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
export type WebhookAttemptRow = typeof webhookAttempts.$inferSelect;
