import type { DatabaseHandle } from "../../platform/db/client.ts";
import type { Logger } from "../../platform/logging/logger.ts";
import { fingerprintAdoption } from "./problems/adopt-fingerprints.ts";
import type { ProblemOccurrence } from "./problems/fingerprint.ts";
import { groupDeferredLogs } from "./problems/group-deferred-logs.ts";
import { DEFERRED_LOG_WAIT_MS, recordProblems } from "./problems/record-problems.ts";
import { claimRequest, logCopy, metricCopy, type RequestCopy } from "./storage/request-rows.ts";
import { type ResourceRef, resourceTouches, upsertResources } from "./storage/resources.ts";
import { batchWrites } from "./storage/span-batches.ts";
import { copyNewSpans, copySpans, encodeSpanRows, type SpanRows } from "./storage/span-chunks.ts";
import { type SqlRunner, telemetryDatabase } from "./storage/sql-runner.ts";
import {
  querySearchLogs,
  queryServiceHealth,
  queryServiceSeries,
  queryTraceSpans,
} from "./storage/store-reads.ts";
import { encodeRecords } from "./storage/stored-spans.ts";
import { sweepTelemetry } from "./sweep-telemetry.ts";
import type { TelemetryTenant } from "./telemetry-records.ts";
import type { PreparedWrite, TelemetryStore } from "./telemetry-store.ts";

const nothing: PreparedWrite = { write: async () => {} };

/** One request's encoded spans and the exceptions they carry. */
type SpanWrite = { tenant: TelemetryTenant; rows: SpanRows; exceptions: ProblemOccurrence[] };

/**
 * Span writes committed together (storage/span-batches.ts): up to 8 requests a transaction, two
 * transactions at a time (one can commit while the next is written).
 */
const SPAN_BATCHES = { maxBatch: 8, maxFlushing: 2 };

/**
 * Telemetry in the service database (PostgreSQL or PGlite). Rows go in by `COPY` (the cheapest way
 * into PostgreSQL by far: no parameters, no per-row planning), built before the batch waits for a
 * writer, in one transaction with the batch's problems and resource records. A retention sweep
 * runs every `sweepEveryMs`, and deferred error logs are grouped every `everyMs` once they waited
 * `waitMs` (problems/record-problems.ts), on unref'd timers; `close()` stops them.
 */
export function createPostgresTelemetryStore(args: {
  database: DatabaseHandle;
  logger: Logger;
  clock: () => Date;
  retention?: { days: number; sweepEveryMs: number };
  deferredLogs?: { waitMs: number; everyMs: number };
}): TelemetryStore {
  const { db } = args.database;
  const database = telemetryDatabase(args.database);
  const touches = resourceTouches();
  const adopt = fingerprintAdoption({ database, logger: args.logger });
  const deferredWaitMs = args.deferredLogs?.waitMs ?? DEFERRED_LOG_WAIT_MS;

  /**
   * One transaction for one or more requests (`parts`): `rows` writes their rows and answers, per
   * part, the exception occurrences to count (of the part's `occurrences`); then each
   * environment's problems and its resources not recorded lately. Environments go in one order,
   * so two transactions lock shared problem rows alike.
   */
  const write = async (
    parts: { tenant: TelemetryTenant; refs: ResourceRef[]; occurrences: ProblemOccurrence[] }[],
    rows: (run: SqlRunner) => Promise<ProblemOccurrence[][]>,
  ) => {
    await adopt(parts);
    const now = args.clock();
    const byEnvironment = new Map<string, { tenant: TelemetryTenant; refs: Map<string, ResourceRef> }>();
    for (const { tenant, refs } of parts) {
      const entry = byEnvironment.get(tenant.environmentId) ?? { tenant, refs: new Map() };
      for (const ref of refs) entry.refs.set(ref.id, ref);
      byEnvironment.set(tenant.environmentId, entry);
    }
    const environments = [...byEnvironment.values()]
      .sort((a, b) => (a.tenant.environmentId < b.tenant.environmentId ? -1 : 1))
      .map(({ tenant, refs }) => ({ tenant, due: touches.due(tenant, [...refs.values()], now.getTime()) }));
    await database.transaction(async (run) => {
      const counted = await rows(run);
      // Problems and resources last: their row locks are then held only until the commit.
      for (const { tenant, due } of environments) {
        const occurrences = parts.flatMap((part, i) =>
          part.tenant.environmentId === tenant.environmentId ? (counted[i] ?? []) : [],
        );
        await recordProblems(run, tenant, occurrences, now);
        await upsertResources(run, tenant, due, now.toISOString());
      }
    });
    for (const { tenant, due } of environments) touches.remember(tenant, due, now.getTime());
  };

  const groupDeferred = (now: Date) => groupDeferredLogs({ database, now, waitMs: deferredWaitMs, adopt });

  const timers: NodeJS.Timeout[] = [];
  if (args.deferredLogs) {
    const timer = setInterval(() => {
      groupDeferred(args.clock()).catch((err: unknown) =>
        args.logger.warn({ err }, "grouping deferred error logs failed"),
      );
    }, args.deferredLogs.everyMs);
    timer.unref();
    timers.push(timer);
  }
  if (args.retention) {
    const { days, sweepEveryMs } = args.retention;
    const timer = setInterval(() => {
      sweepTelemetry(db, args.clock(), days)
        .then((result) => args.logger.info(result, "telemetry retention sweep"))
        .catch((err: unknown) => args.logger.warn({ err }, "telemetry retention sweep failed"));
    }, sweepEveryMs);
    timer.unref();
    timers.push(timer);
  }

  const partsOf = (batch: SpanWrite[]) =>
    batch.map((w) => ({ tenant: w.tenant, refs: w.rows.resources, occurrences: w.exceptions }));

  /** Several requests' spans in one transaction: both COPYs carry all their rows. */
  const writeSpanBatch = (batch: SpanWrite[]) =>
    write(partsOf(batch), async (run) => {
      await copySpans(
        run,
        batch.map((w) => w.rows),
      );
      return batch.map((w) => w.exceptions);
    });

  /**
   * One request's spans: the fast path, then the staging-table path, which skips chunks stored
   * before (a retry makes the COPY fail) and tells which were new, so their exceptions count once.
   */
  const writeSpans = async (span: SpanWrite) => {
    try {
      await writeSpanBatch([span]);
    } catch (fastPathError) {
      // A fault other than a stored chunk fails there again and is reported from there.
      args.logger.debug({ err: fastPathError }, "span COPY failed; retrying through a staging table");
      await write(partsOf([span]), async (run) => {
        const fresh = await copyNewSpans(run, span.rows);
        return [span.exceptions.filter((o) => o.traceId !== null && fresh.has(o.traceId))];
      });
    }
  };

  const spanBatches = batchWrites<SpanWrite>({
    ...SPAN_BATCHES,
    writeBatch: writeSpanBatch,
    single: writeSpans,
    onBatchFailed: (err, size) =>
      args.logger.debug({ err, size }, "a batch of span writes failed; writing them one by one"),
  });

  /** A log or metric request: its key claimed (a retry stores and counts nothing), then its COPY. */
  const prepareRequest = (
    tenant: TelemetryTenant,
    copy: RequestCopy,
    exceptions: ProblemOccurrence[],
    requestKey: string | undefined,
  ): PreparedWrite => ({
    write: () =>
      write([{ tenant, refs: copy.resources, occurrences: exceptions }], async (run) => {
        if (!(await claimRequest(run, tenant, requestKey, args.clock()))) return [];
        await run.copyIn(copy.target, copy.data);
        return [exceptions];
      }),
  });

  const prepareSpanRows: TelemetryStore["prepareSpanRows"] = (tenant, rows, exceptions = []) => {
    if (rows.count === 0) return nothing;
    return { write: () => spanBatches.write({ tenant, rows, exceptions }) };
  };

  return {
    prepareSpans(tenant, records, exceptions = []) {
      if (records.length === 0) return nothing;
      const { spans, resources } = encodeRecords(records);
      return prepareSpanRows(tenant, encodeSpanRows(tenant, spans, resources), exceptions);
    },
    prepareSpanRows,
    prepareLogs: (tenant, records, exceptions = [], requestKey = undefined) =>
      records.length === 0
        ? nothing
        : prepareRequest(tenant, logCopy(tenant, records), exceptions, requestKey),
    prepareMetricPoints: (tenant, records, requestKey) =>
      records.length === 0 ? nothing : prepareRequest(tenant, metricCopy(tenant, records), [], requestKey),
    serviceHealth: (environmentId, query) => queryServiceHealth(db, environmentId, query),
    serviceSeries: (environmentId, query) => queryServiceSeries(db, environmentId, query),
    searchLogs: (environmentId, search) => querySearchLogs(db, environmentId, search),
    traceSpans: (environmentId, traceId, limit) => queryTraceSpans(db, environmentId, traceId, limit),
    sweep: (cutoff) => sweepTelemetry(db, cutoff, 0),
    groupDeferredLogs: groupDeferred,
    close() {
      for (const timer of timers) clearInterval(timer);
    },
  };
}
