import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/client.ts";
import type { Logger } from "../../platform/logging/logger.ts";
import type { WebhookEventType } from "./event-types.ts";

/**
 * Emitting an event is the outbox half of delivery: one `webhook_deliveries` row per enabled
 * endpoint of the organisation subscribed to the type, written in the caller's transaction (or
 * statement), so an event exists iff the change that caused it commits. Nothing leaves here and no
 * job is sent: the dispatcher (deliver.ts) moves new rows to the job queue. With no subscribed
 * endpoint the insert selects nothing (one index probe on webhook_endpoints).
 */
export async function emitWebhookEvent(
  tx: Db,
  event: { organizationId: string; type: WebhookEventType; data: Record<string, unknown>; at: Date },
): Promise<void> {
  await tx.execute(sql`
    insert into webhook_deliveries (id, organization_id, endpoint_id, message_id, event_type, payload, next_attempt_at, created_at)
    select ${newDeliveryId}, e.organization_id, e.id, ${newMessageId}, ${event.type},
           jsonb_build_object('type', ${event.type}::text, 'timestamp', ${event.at.toISOString()}::text,
                              'data', ${JSON.stringify(event.data)}::jsonb),
           ${event.at.toISOString()}::timestamptz, ${event.at.toISOString()}::timestamptz
      from webhook_endpoints e
     where e.organization_id = ${event.organizationId} and e.enabled and ${event.type}::text = any(e.event_types)`);
}

/**
 * `emitWebhookEvent` that never fails the caller: inside a savepoint, so a failed insert rolls
 * back alone and the caller's transaction commits its change without the event (logged).
 */
export async function emitWebhookEventBestEffort(
  tx: Db,
  logger: Logger,
  event: Parameters<typeof emitWebhookEvent>[1],
): Promise<void> {
  try {
    await tx.transaction((savepoint) => emitWebhookEvent(savepoint, event));
  } catch (err) {
    logger.warn({ err, eventType: event.type }, "a webhook event was not recorded");
  }
}

/**
 * The same outbox insert as a data-modifying CTE body, for emitters that are one SQL statement
 * (the call record, problem upserts): `source` is a CTE name with an `organization_id` column,
 * `data` a jsonb expression over its row `s`, `where` which rows emit.
 */
export function webhookOutboxInsert(args: {
  type: WebhookEventType;
  source: string;
  data: SQL;
  where: SQL;
}): SQL {
  return sql`insert into webhook_deliveries (id, organization_id, endpoint_id, message_id, event_type, payload, next_attempt_at, created_at)
    select ${newDeliveryId}, e.organization_id, e.id, ${newMessageId}, ${args.type}::text,
           jsonb_build_object('type', ${args.type}::text,
                              'timestamp', to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                              'data', ${args.data}),
           now(), now()
      from ${sql.raw(args.source)} s
      join webhook_endpoints e
        on e.organization_id = s.organization_id and e.enabled and ${args.type}::text = any(e.event_types)
     where ${args.where}`;
}

// Random ids made in SQL (the rows are inserted by set-based statements): 128 random bits as hex.
const newDeliveryId = sql.raw(`'whd_' || replace(gen_random_uuid()::text, '-', '')`);
const newMessageId = sql.raw(`'msg_' || replace(gen_random_uuid()::text, '-', '')`);
