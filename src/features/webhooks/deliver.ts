import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { isAppError } from "../../errors.ts";
import {
  type WebhookEndpointRow,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
} from "../../platform/db/schema/webhooks.ts";
import type { QueueOptions } from "../../platform/queue/queue.ts";
import { version } from "../../version.ts";
import { openSigningSecret } from "./signing-secret.ts";

/** The job queue deliveries run on: one job per attempt. */
export const WEBHOOK_QUEUE = "webhooks.deliver";

/** One attempt waits at most `timeoutMs` for the answer; the run is given up well after. */
export const webhookQueues: Record<string, QueueOptions> = {
  [WEBHOOK_QUEUE]: { expireInSeconds: 120 },
};

/** Retry schedule, the disabling rule and the dispatcher's pace (docs/webhooks.md). */
export type WebhookSettings = {
  /** Attempts per delivery, the first included. */
  maxAttempts: number;
  /** Delay before attempt n+1: `baseDelayMs × 2^(n−1)`, at most `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** An endpoint is disabled when this many deliveries in a row failed every attempt… */
  disableAfterFailedDeliveries: number;
  /** …and it has had no success (or, never successful, existed) for this long. */
  disableAfterMs: number;
  /** How long one attempt waits for the receiver's answer. */
  timeoutMs: number;
  /** How often the dispatcher moves new outbox rows to the job queue. */
  dispatchIntervalMs: number;
};

export const defaultWebhookSettings: WebhookSettings = {
  maxAttempts: 8,
  baseDelayMs: 30_000,
  maxDelayMs: 60 * 60_000,
  disableAfterFailedDeliveries: 5,
  disableAfterMs: 24 * 60 * 60_000,
  timeoutMs: 15_000,
  dispatchIntervalMs: 1_000,
};

/** The delay before attempt `attempt + 1`: exponential, capped. */
export const retryDelayMs = (settings: WebhookSettings, attempt: number): number =>
  Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (attempt - 1));

const EXCERPT_BYTES = 1024;

/**
 * Moves outbox rows (`queued_at` null) to the job queue: each row's first job is sent in the
 * transaction that marks it queued, so a row gets exactly one first job whichever instance
 * dispatches it, and one that crashes mid-way leaves its rows for the next round.
 */
export async function dispatchWebhookDeliveries(deps: Pick<Deps, "db" | "jobs" | "clock">): Promise<number> {
  return withTransaction(deps.db, async (tx) => {
    const rows = await tx
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(isNull(webhookDeliveries.queuedAt))
      .orderBy(asc(webhookDeliveries.createdAt))
      .limit(100)
      .for("update", { skipLocked: true });
    if (rows.length === 0) return 0;
    const now = deps.clock();
    await tx
      .update(webhookDeliveries)
      .set({ queuedAt: now })
      .where(
        inArray(
          webhookDeliveries.id,
          rows.map((r) => r.id),
        ),
      );
    for (const row of rows) await deps.jobs.send(WEBHOOK_QUEUE, { deliveryId: row.id, attempt: 1 }, { tx });
    return rows.length;
  });
}

type Outcome = {
  status: number | null;
  excerpt: string | null;
  errorCode: string | null;
  durationMs: number;
};

/** One signed POST through the egress: public HTTPS only, no redirects, bounded wait and body. */
async function post(
  deps: Deps,
  settings: WebhookSettings,
  endpoint: WebhookEndpointRow,
  delivery: {
    messageId: string;
    payload: Record<string, unknown>;
  },
): Promise<Outcome> {
  const body = JSON.stringify(delivery.payload);
  const timestamp = deps.clock();
  const signature = new Webhook(openSigningSecret(deps.keyring, endpoint)).sign(
    delivery.messageId,
    timestamp,
    body,
  );
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const res = await deps.egress.fetch(endpoint.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": `patchbay-webhooks/${version}`,
        "webhook-id": delivery.messageId,
        "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
        "webhook-signature": signature,
      },
      body,
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
    const excerpt = await readExcerpt(res);
    return {
      status: res.status,
      excerpt,
      errorCode: res.ok ? null : "http_status",
      durationMs: elapsed(),
    };
  } catch (error) {
    const code = isAppError(error)
      ? error.code
      : error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")
        ? "remote_timeout"
        : "remote_unreachable";
    return { status: null, excerpt: null, errorCode: code, durationMs: elapsed() };
  }
}

/** The first KiB of the answer as text; the rest is not read (the connection is dropped). */
async function readExcerpt(res: Response): Promise<string | null> {
  if (!res.body) return null;
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body cut short still leaves what arrived.
  } finally {
    reader.cancel().catch(() => undefined);
  }
  const text = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString("utf8");
  return text.length > 0 ? text : null;
}

/**
 * One attempt of one delivery. The attempt is written, with the delivery's new state, the
 * endpoint's counters and (if another attempt follows) the next job, in one transaction, guarded by
 * the attempt number: a job that runs twice (resumed after a crash) writes once. A receiver may
 * then see a message twice, as Standard Webhooks allows: it deduplicates by `webhook-id`.
 */
export async function deliverAttempt(
  deps: Deps,
  settings: WebhookSettings,
  job: { deliveryId: string; attempt: number },
): Promise<void> {
  const [found] = await deps.db
    .select({ delivery: webhookDeliveries, endpoint: webhookEndpoints })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .where(eq(webhookDeliveries.id, job.deliveryId))
    .limit(1);
  if (!found) return;
  const { delivery, endpoint } = found;
  if (delivery.status !== "pending" || delivery.attempts !== job.attempt - 1) return;
  const now = () => deps.clock();
  if (!endpoint.enabled) {
    // Disabled meanwhile: nothing is sent; the delivery ends, and can be redelivered once enabled.
    await deps.db
      .update(webhookDeliveries)
      .set({ status: "failed", nextAttemptAt: null, finishedAt: now() })
      .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.status, "pending")));
    return;
  }
  const attemptedAt = now();
  const outcome = await post(deps, settings, endpoint, delivery);
  const succeeded = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
  // The egress refused the target (not public, not HTTPS, a redirect): trying again cannot help.
  const permanent = outcome.errorCode === "egress_blocked";
  const final = succeeded || permanent || job.attempt >= settings.maxAttempts;
  const finishedAt = now();
  const nextAt = final ? null : new Date(finishedAt.getTime() + retryDelayMs(settings, job.attempt));

  await withTransaction(deps.db, async (tx) => {
    const [moved] = await tx
      .update(webhookDeliveries)
      .set({
        attempts: job.attempt,
        status: succeeded ? "succeeded" : final ? "failed" : "pending",
        nextAttemptAt: nextAt,
        finishedAt: final ? finishedAt : null,
      })
      .where(
        and(
          eq(webhookDeliveries.id, delivery.id),
          eq(webhookDeliveries.status, "pending"),
          eq(webhookDeliveries.attempts, job.attempt - 1),
        ),
      )
      .returning({ id: webhookDeliveries.id });
    if (!moved) return;
    await tx.insert(webhookAttempts).values({
      deliveryId: delivery.id,
      attempt: job.attempt,
      attemptedAt,
      durationMs: outcome.durationMs,
      responseStatus: outcome.status,
      responseBodyExcerpt: outcome.excerpt,
      errorCode: outcome.errorCode,
      succeeded,
    });
    if (succeeded) {
      await tx
        .update(webhookEndpoints)
        .set({ lastSuccessAt: finishedAt, failedDeliveriesInRow: 0 })
        .where(eq(webhookEndpoints.id, endpoint.id));
    } else if (final) {
      await markDeliveryFailed(tx, settings, endpoint.id, finishedAt);
    } else {
      await tx
        .update(webhookEndpoints)
        .set({ lastFailureAt: finishedAt })
        .where(eq(webhookEndpoints.id, endpoint.id));
      await deps.jobs.send(
        WEBHOOK_QUEUE,
        { deliveryId: delivery.id, attempt: job.attempt + 1 },
        { tx, startAfter: nextAt ?? undefined },
      );
    }
  });
  deps.logger.info(
    {
      deliveryId: delivery.id,
      endpointId: endpoint.id,
      eventType: delivery.eventType,
      attempt: job.attempt,
      status: outcome.status,
      errorCode: outcome.errorCode,
      final,
    },
    succeeded ? "webhook delivered" : "webhook attempt failed",
  );
}

/**
 * A delivery that failed every attempt counts against its endpoint. The disabling rule: the
 * endpoint is disabled (`failing`) once `disableAfterFailedDeliveries` deliveries in a row have
 * failed and it has had no success for `disableAfterMs` (or, never successful, has existed that
 * long): a receiver that is down for a day, not one that hiccupped.
 */
async function markDeliveryFailed(
  tx: Deps["db"],
  settings: WebhookSettings,
  endpointId: string,
  at: Date,
): Promise<void> {
  const horizon = new Date(at.getTime() - settings.disableAfterMs);
  await tx
    .update(webhookEndpoints)
    .set({
      lastFailureAt: at,
      failedDeliveriesInRow: sql`${webhookEndpoints.failedDeliveriesInRow} + 1`,
    })
    .where(eq(webhookEndpoints.id, endpointId));
  await tx
    .update(webhookEndpoints)
    .set({ enabled: false, disabledReason: "failing", disabledAt: at })
    .where(
      and(
        eq(webhookEndpoints.id, endpointId),
        eq(webhookEndpoints.enabled, true),
        sql`${webhookEndpoints.failedDeliveriesInRow} >= ${settings.disableAfterFailedDeliveries}`,
        sql`coalesce(${webhookEndpoints.lastSuccessAt}, ${webhookEndpoints.createdAt}) <= ${horizon.toISOString()}::timestamptz`,
      ),
    );
}

/**
 * Works the delivery queue on this instance and runs the dispatcher. Returns the dispatcher's
 * stop: call it before the job queue stops.
 */
export async function registerWebhookWorker(
  deps: Deps,
  settings: WebhookSettings = defaultWebhookSettings,
): Promise<() => void> {
  await deps.jobs.work(
    WEBHOOK_QUEUE,
    async (job) => {
      const { deliveryId, attempt } = job.data;
      if (typeof deliveryId !== "string" || typeof attempt !== "number") {
        throw new Error("webhook job without deliveryId/attempt");
      }
      await deliverAttempt(deps, settings, { deliveryId, attempt });
    },
    { concurrency: 2 },
  );
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    dispatchWebhookDeliveries(deps)
      .catch((err: unknown) => deps.logger.warn({ err }, "webhook dispatch failed"))
      .finally(() => {
        running = false;
      });
  }, settings.dispatchIntervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
