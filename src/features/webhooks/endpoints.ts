import { and, count, eq } from "drizzle-orm";
import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError, isAppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import type { Permission } from "../../permissions.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import type { Db } from "../../platform/db/client.ts";
import { readPage } from "../../platform/db/pagination.ts";
import { type WebhookEndpointRow, webhookEndpoints } from "../../platform/db/schema/webhooks.ts";
import { validateEndpointUrl } from "../../platform/egress/endpoint-url.ts";
import { isWebhookEventType, webhookEventTypes } from "./event-types.ts";
import { toWebhookEndpoint, type WebhookEndpoint } from "./schemas.ts";
import { generateSigningSecret, sealSigningSecret } from "./signing-secret.ts";

/** Endpoints per organisation: each event fans out to every subscribed one. */
export const MAX_WEBHOOK_ENDPOINTS = 20;

type OrgInput = { organizationId: string };

/**
 * Owners and admins of the organisation named in the path, and only it: another organisation's
 * id is `not_found`, the same answer as an endpoint that does not exist.
 */
export function authorize(ctx: ServiceContext, input: OrgInput, permission: Permission): void {
  requireOwnerOrAdmin(ctx, permission);
  if (input.organizationId !== ctx.actor.organizationId) {
    throw new AppError("not_found", `Organisation ${input.organizationId} was not found.`);
  }
}

const notFound = (id: string) => new AppError("not_found", `Webhook endpoint ${id} was not found.`);

/** The endpoint in the caller's organisation, or `not_found`. */
export async function findEndpoint(
  db: Db,
  ctx: ServiceContext,
  endpointId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<WebhookEndpointRow> {
  const query = db
    .select()
    .from(webhookEndpoints)
    .where(
      and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.organizationId, ctx.actor.organizationId)),
    )
    .limit(1);
  const [row] = await (opts.forUpdate ? query.for("update") : query);
  if (!row) throw notFound(endpointId);
  return row;
}

/**
 * A receiver URL under the same rules as an MCP endpoint (public `https://`, no userinfo, query
 * or fragment; the development override allows loopback test servers): `invalid_webhook_url`
 * with the rule. Addresses are checked again when each delivery dials.
 */
function checkUrl(ctx: ServiceContext, raw: string): string {
  try {
    return validateEndpointUrl(raw, ctx.deps.config.egress).canonical;
  } catch (error) {
    if (isAppError(error) && error.code === "invalid_endpoint_url") {
      throw new AppError(
        "invalid_webhook_url",
        error.message.replace(/^endpointUrl:/, "url:"),
        error.details,
      );
    }
    throw error;
  }
}

/**
 * What the audit trail keeps of a receiver URL: its origin. A receiver's path often carries its
 * own secret (chat webhooks do), and the trail outlives the endpoint.
 */
const originOf = (url: string): string => new URL(url).origin;

function checkEventTypes(types: string[]): string[] {
  const unknown = types.filter((t) => !isWebhookEventType(t));
  if (unknown.length > 0) {
    throw new AppError(
      "unknown_event_type",
      `Unknown event type${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}. Known: ${webhookEventTypes.join(", ")}.`,
      { unknown, known: [...webhookEventTypes] },
    );
  }
  return [...new Set(types)];
}

export async function createWebhookEndpoint(args: {
  ctx: ServiceContext;
  input: OrgInput & { url: string; eventTypes: string[]; description?: string | undefined };
}): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const { ctx, input } = args;
  authorize(ctx, input, "webhooks:manage");
  const url = checkUrl(ctx, input.url);
  const eventTypes = checkEventTypes(input.eventTypes);
  const secret = generateSigningSecret();
  const now = ctx.deps.clock();
  return withTransaction(ctx, async (tx) => {
    const [existing] = await tx
      .select({ n: count() })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.organizationId, ctx.actor.organizationId));
    if ((existing?.n ?? 0) >= MAX_WEBHOOK_ENDPOINTS) {
      throw new AppError(
        "limit_exceeded",
        `An organisation has at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; delete one first.`,
        { limit: MAX_WEBHOOK_ENDPOINTS },
      );
    }
    const id = newId("whe");
    const [row] = await tx
      .insert(webhookEndpoints)
      .values({
        id,
        organizationId: ctx.actor.organizationId,
        url,
        description: input.description ?? "",
        eventTypes,
        ...sealSigningSecret(ctx.deps.keyring, { organizationId: ctx.actor.organizationId, id }, 1, secret),
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    if (!row) throw new Error("insert returned no row");
    await recordAudit(tx, ctx, {
      action: "webhook_endpoint.created",
      targetType: "webhook_endpoint",
      targetId: id,
      details: { endpointOrigin: originOf(url), eventTypes },
    });
    return { endpoint: toWebhookEndpoint(row), secret };
  });
}

export async function listWebhookEndpoints(args: {
  ctx: ServiceContext;
  input: OrgInput & { pageSize: number; cursor?: string | undefined };
}): Promise<{ items: WebhookEndpoint[]; nextCursor: string | null }> {
  authorize(args.ctx, args.input, "webhooks:read");
  return readPage(
    args.ctx.deps.db,
    webhookEndpoints,
    { organizationId: args.ctx.actor.organizationId },
    args.input,
    toWebhookEndpoint,
  );
}

export async function getWebhookEndpoint(args: {
  ctx: ServiceContext;
  input: OrgInput & { endpointId: string };
}): Promise<WebhookEndpoint> {
  authorize(args.ctx, args.input, "webhooks:read");
  return toWebhookEndpoint(await findEndpoint(args.ctx.deps.db, args.ctx, args.input.endpointId));
}

export async function updateWebhookEndpoint(args: {
  ctx: ServiceContext;
  input: OrgInput & {
    endpointId: string;
    url?: string | undefined;
    eventTypes?: string[] | undefined;
    description?: string | undefined;
    enabled?: boolean | undefined;
  };
}): Promise<WebhookEndpoint> {
  const { ctx, input } = args;
  authorize(ctx, input, "webhooks:manage");
  const url = input.url === undefined ? undefined : checkUrl(ctx, input.url);
  const eventTypes = input.eventTypes === undefined ? undefined : checkEventTypes(input.eventTypes);
  const now = ctx.deps.clock();
  return withTransaction(ctx, async (tx) => {
    const row = await findEndpoint(tx, ctx, input.endpointId, { forUpdate: true });
    const enabling = input.enabled === true && !row.enabled;
    const disabling = input.enabled === false && row.enabled;
    const next = await revise(
      tx,
      ctx,
      row,
      now,
      {
        ...(url !== undefined ? { url } : {}),
        ...(eventTypes !== undefined ? { eventTypes } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        // Enabling again starts the failure count over: the automatic rule then needs a new run.
        ...(enabling
          ? { enabled: true, disabledReason: null, disabledAt: null, failedDeliveriesInRow: 0 }
          : {}),
        ...(disabling ? { enabled: false, disabledReason: "manual", disabledAt: now } : {}),
      },
      "webhook_endpoint.updated",
      {
        revision: row.revision + 1,
        ...(url !== undefined ? { endpointOrigin: originOf(url) } : {}),
        ...(eventTypes !== undefined ? { eventTypes } : {}),
        ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      },
    );
    return toWebhookEndpoint(next);
  });
}

/**
 * One change of an endpoint locked in `tx`: its next revision with `set`, audited as `action`.
 * The row is locked (`findEndpoint` with `forUpdate`), so the update finds it.
 */
async function revise(
  tx: Db,
  ctx: ServiceContext,
  row: WebhookEndpointRow,
  now: Date,
  set: Partial<typeof webhookEndpoints.$inferInsert>,
  action: "webhook_endpoint.updated" | "webhook_endpoint.secret_rotated",
  details: Record<string, unknown>,
): Promise<WebhookEndpointRow> {
  const [next] = await tx
    .update(webhookEndpoints)
    .set({ ...set, revision: row.revision + 1, updatedAt: now })
    .where(eq(webhookEndpoints.id, row.id))
    .returning();
  if (!next) throw new Error("a locked webhook endpoint was not updated");
  await recordAudit(tx, ctx, { action, targetType: "webhook_endpoint", targetId: row.id, details });
  return next;
}

/** Deletes the endpoint, its sealed secret and its delivery log (queued deliveries then find nothing). */
export async function deleteWebhookEndpoint(args: {
  ctx: ServiceContext;
  input: OrgInput & { endpointId: string };
}): Promise<void> {
  const { ctx, input } = args;
  authorize(ctx, input, "webhooks:manage");
  await withTransaction(ctx, async (tx) => {
    const row = await findEndpoint(tx, ctx, input.endpointId, { forUpdate: true });
    await tx.delete(webhookEndpoints).where(eq(webhookEndpoints.id, row.id));
    await recordAudit(tx, ctx, {
      action: "webhook_endpoint.deleted",
      targetType: "webhook_endpoint",
      targetId: row.id,
      details: { endpointOrigin: originOf(row.url) },
    });
  });
}

/**
 * A new signing secret (shown once), sealed under the next secret version: the old one stops
 * signing at once, and opens no more (its binding's version is gone).
 */
export async function rotateWebhookSecret(args: {
  ctx: ServiceContext;
  input: OrgInput & { endpointId: string };
}): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const { ctx, input } = args;
  authorize(ctx, input, "webhooks:manage");
  const secret = generateSigningSecret();
  const now = ctx.deps.clock();
  return withTransaction(ctx, async (tx) => {
    const row = await findEndpoint(tx, ctx, input.endpointId, { forUpdate: true });
    const version = row.secretVersion + 1;
    const next = await revise(
      tx,
      ctx,
      row,
      now,
      { ...sealSigningSecret(ctx.deps.keyring, row, version, secret), secretRotatedAt: now },
      "webhook_endpoint.secret_rotated",
      { secretVersion: version },
    );
    return { endpoint: toWebhookEndpoint(next), secret };
  });
}
