import { and, eq, lt, notExists, type SQL, sql } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import type { Db } from "../../platform/db/client.ts";
import { problemDeferredLogs, problemSpans, problems } from "../../platform/db/schema/problems.ts";
import { remediations } from "../../platform/db/schema/remediations.ts";
import {
  telemetryEntrySpans,
  telemetryLogs,
  telemetryMetricPoints,
  telemetryRequests,
  telemetryResources,
  telemetryTraceChunks,
} from "../../platform/db/schema/telemetry.ts";
import type { SweepResult } from "./telemetry-store.ts";

/** Rows deleted per statement: short transactions, no long row locks, bounded WAL per step. */
const DEFAULT_BATCH = 5_000;
const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * A resource outlives the retention by this much. Its `last_seen` may lag its latest row by the
 * refresh interval (1 hour) and rows may be stamped up to 24 hours ahead, so a resource is only
 * deleted once nothing that points to it can still be kept.
 */
const RESOURCE_GRACE_MS = 2 * DAY_MS;

/**
 * Retention: deletes telemetry older than `days` before `now`, batch by batch (located through
 * the BRIN time indexes). Problems not seen within the retention go too — their traces and logs
 * are gone — unless a remediation refers to them. Safe to run on several instances at once:
 * deletes are idempotent.
 */
export async function sweepTelemetry(
  db: Db,
  now: Date,
  days: number,
  options: { batch?: number } = {},
): Promise<SweepResult> {
  const cutoffMs = now.getTime() - days * DAY_MS;
  const cutoff = new Date(cutoffMs).toISOString();
  const batch = options.batch ?? DEFAULT_BATCH;
  return {
    // A chunk goes with its earliest span; entry spans are what service health reads of them.
    spans: await sweepTable(db, telemetryTraceChunks, lt(telemetryTraceChunks.startTime, cutoff), batch, {
      weight: sql<number>`${telemetryTraceChunks.spanCount}`,
    }),
    entrySpans: await sweepTable(db, telemetryEntrySpans, lt(telemetryEntrySpans.startTime, cutoff), batch),
    logs: await sweepTable(db, telemetryLogs, lt(telemetryLogs.time, cutoff), batch),
    metricPoints: await sweepTable(db, telemetryMetricPoints, lt(telemetryMetricPoints.time, cutoff), batch),
    requestKeys: await sweepTable(db, telemetryRequests, lt(telemetryRequests.receivedAt, cutoff), batch),
    resources: await sweepTable(
      db,
      telemetryResources,
      lt(telemetryResources.lastSeen, new Date(cutoffMs - RESOURCE_GRACE_MS).toISOString()),
      batch,
    ),
    problemSpans: await sweepTable(db, problemSpans, lt(problemSpans.recordedAt, cutoff), batch),
    // Grouped within a minute while an instance runs; only ever this old if none did.
    deferredLogs: await sweepTable(
      db,
      problemDeferredLogs,
      lt(problemDeferredLogs.receivedAt, cutoff),
      batch,
    ),
    problems: await sweepTable(
      db,
      problems,
      and(
        lt(problems.lastSeen, new Date(cutoffMs)),
        notExists(
          db
            .select({ one: sql`1` })
            .from(remediations)
            .where(
              and(
                eq(remediations.environmentId, problems.environmentId),
                eq(remediations.problemId, problems.id),
              ),
            ),
        ),
      ),
      batch,
    ),
  };
}

/** Deletes `batch` rows at a time; answers the rows deleted, or the sum of `weight` over them. */
async function sweepTable(
  db: Db,
  table: PgTable,
  expired: SQL | undefined,
  batch: number,
  options: { weight?: SQL<number> } = {},
): Promise<number> {
  let total = 0;
  for (;;) {
    const doomed = db.select({ ctid: sql`ctid` }).from(table).where(expired).limit(batch);
    const deleted = await db
      .delete(table)
      .where(sql`ctid = any(array(${doomed}))`)
      .returning({ weight: options.weight ?? sql<number>`1` });
    for (const row of deleted) total += Number(row.weight);
    if (deleted.length < batch) return total;
  }
}
