import { lt, sql } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { Db } from "../../db/client.ts";
import { telemetryLogs, telemetryMetricPoints, telemetrySpans } from "../../db/schema/telemetry.ts";
import type { SweepResult } from "./telemetry-store.ts";

/** Rows deleted per statement: short transactions, no long row locks, bounded WAL per step. */
const DEFAULT_BATCH = 5_000;

/**
 * Retention: deletes telemetry older than `days` before `now`, batch by batch (located through
 * the BRIN time indexes). Safe to run on several instances at once: deletes are idempotent.
 */
export async function sweepTelemetry(
  db: Db,
  now: Date,
  days: number,
  options: { batch?: number } = {},
): Promise<SweepResult> {
  const cutoff = new Date(now.getTime() - days * 24 * 60 * 60 * 1000).toISOString();
  const batch = options.batch ?? DEFAULT_BATCH;
  return {
    spans: await sweepTable(db, telemetrySpans, telemetrySpans.startTime, cutoff, batch),
    logs: await sweepTable(db, telemetryLogs, telemetryLogs.time, cutoff, batch),
    metricPoints: await sweepTable(db, telemetryMetricPoints, telemetryMetricPoints.time, cutoff, batch),
  };
}

async function sweepTable(
  db: Db,
  table: PgTable,
  time: PgColumn,
  cutoff: string,
  batch: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const doomed = db.select({ ctid: sql`ctid` }).from(table).where(lt(time, cutoff)).limit(batch);
    const deleted = await db
      .delete(table)
      .where(sql`ctid = any(array(${doomed}))`)
      .returning({ one: sql<number>`1` });
    total += deleted.length;
    if (deleted.length < batch) return total;
  }
}
