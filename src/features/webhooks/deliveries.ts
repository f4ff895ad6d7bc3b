import { and, desc, eq, inArray } from "drizzle-orm";
import type { ServiceContext } from "../../context.ts";
import { withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import type { Db } from "../../platform/db/client.ts";
import { beforeCursor, decodeCursor, toPage } from "../../platform/db/pagination.ts";
import {
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookDeliveryStatus,
  webhookAttempts,
  webhookDeliveries,
} from "../../platform/db/schema/webhooks.ts";
import { authorize, findEndpoint } from "./endpoints.ts";
import { toWebhookDelivery, type WebhookDelivery } from "./schemas.ts";

type EndpointInput = { organizationId: string; endpointId: string };

/** Attempts shown per delivery: the latest ones. */
const LAST_ATTEMPTS = 10;

async function withAttempts(db: Db, rows: WebhookDeliveryRow[]): Promise<WebhookDelivery[]> {
  if (rows.length === 0) return [];
  const attempts = await db
    .select()
    .from(webhookAttempts)
    .where(
      inArray(
        webhookAttempts.deliveryId,
        rows.map((r) => r.id),
      ),
    )
    .orderBy(desc(webhookAttempts.attempt));
  const byDelivery = new Map<string, WebhookAttemptRow[]>();
  for (const a of attempts) {
    const list = byDelivery.get(a.deliveryId) ?? [];
    if (list.length < LAST_ATTEMPTS) list.push(a);
    byDelivery.set(a.deliveryId, list);
  }
  return rows.map((r) => toWebhookDelivery(r, byDelivery.get(r.id) ?? []));
}

/** The endpoint's delivery log, newest first, each with its latest answers. */
export async function listWebhookDeliveries(args: {
  ctx: ServiceContext;
  input: EndpointInput & {
    pageSize: number;
    cursor?: string | undefined;
    status?: WebhookDeliveryStatus | undefined;
  };
}): Promise<{ items: WebhookDelivery[]; nextCursor: string | null }> {
  const { ctx, input } = args;
  authorize(ctx, input, "webhooks:read");
  const endpoint = await findEndpoint(ctx.deps.db, ctx, input.endpointId);
  const rows = await ctx.deps.db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.endpointId, endpoint.id),
        input.status ? eq(webhookDeliveries.status, input.status) : undefined,
        beforeCursor(webhookDeliveries.createdAt, webhookDeliveries.id, decodeCursor(input.cursor)),
      ),
    )
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(input.pageSize + 1);
  const page = toPage(rows, input.pageSize, (row) => row);
  return { items: await withAttempts(ctx.deps.db, page.items), nextCursor: page.nextCursor };
}

async function findDelivery(
  db: Db,
  ctx: ServiceContext,
  input: EndpointInput & { deliveryId: string },
): Promise<WebhookDeliveryRow> {
  const [row] = await db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.id, input.deliveryId),
        eq(webhookDeliveries.endpointId, input.endpointId),
        eq(webhookDeliveries.organizationId, ctx.actor.organizationId),
      ),
    )
    .limit(1);
  if (!row) throw new AppError("not_found", `Delivery ${input.deliveryId} was not found.`);
  return row;
}

export async function getWebhookDelivery(args: {
  ctx: ServiceContext;
  input: EndpointInput & { deliveryId: string };
}): Promise<WebhookDelivery> {
  authorize(args.ctx, args.input, "webhooks:read");
  const row = await findDelivery(args.ctx.deps.db, args.ctx, args.input);
  const [view] = await withAttempts(args.ctx.deps.db, [row]);
  if (!view) throw new Error("unreachable");
  return view;
}

/**
 * Sends a delivery's message again as a new delivery (same `webhook-id` and body, so a receiver
 * that saw it deduplicates; fresh attempts and signature). Refused while the original is still
 * being tried, and while the endpoint is disabled.
 */
export async function redeliverWebhook(args: {
  ctx: ServiceContext;
  input: EndpointInput & { deliveryId: string };
}): Promise<WebhookDelivery> {
  const { ctx, input } = args;
  authorize(ctx, input, "webhooks:manage");
  return withTransaction(ctx, async (tx) => {
    const endpoint = await findEndpoint(tx, ctx, input.endpointId);
    const original = await findDelivery(tx, ctx, input);
    if (!endpoint.enabled) {
      throw new AppError(
        "webhook_endpoint_disabled",
        "The endpoint is disabled; enable it first (PATCH with enabled: true), then redeliver.",
      );
    }
    if (original.status === "pending") {
      throw new AppError(
        "delivery_pending",
        "This delivery is still being tried; wait for it to succeed or fail, then redeliver.",
        { nextAttemptAt: original.nextAttemptAt?.toISOString() ?? null },
      );
    }
    const now = ctx.deps.clock();
    const [row] = await tx
      .insert(webhookDeliveries)
      .values({
        id: newId("whd"),
        organizationId: original.organizationId,
        endpointId: original.endpointId,
        messageId: original.messageId,
        eventType: original.eventType,
        payload: original.payload,
        nextAttemptAt: now,
        redeliveryOf: original.id,
        createdAt: now,
      })
      .returning();
    if (!row) throw new Error("insert returned no row");
    await recordAudit(tx, ctx, {
      action: "webhook_delivery.redelivered",
      targetType: "webhook_endpoint",
      targetId: endpoint.id,
      details: { deliveryId: row.id, redeliveryOf: original.id, eventType: original.eventType },
    });
    return toWebhookDelivery(row, []);
  });
}
