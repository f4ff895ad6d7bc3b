import type { ProblemOccurrence } from "./problems/fingerprint.ts";
import type { SpanRows } from "./storage/span-chunks.ts";
import type { LogRecordRow, MetricPointRecord, SpanRecord, TelemetryTenant } from "./telemetry-records.ts";

export type SweepResult = {
  spans: number;
  /** Rows of `telemetry_entry_spans` (service health's view of the spans). */
  entrySpans: number;
  /** Keys of stored log and metric requests (`telemetry_requests`). */
  requestKeys: number;
  logs: number;
  metricPoints: number;
  resources: number;
  problems: number;
  /** Rows of `problem_spans` (which problem a failing span's exception went to). */
  problemSpans: number;
  /** Deferred error logs that no instance grouped (normally grouped within a minute). */
  deferredLogs: number;
};

/** A batch made ready for storage (the CPU work done, its records collectable); `write` is the I/O. */
export type PreparedWrite = { write(): Promise<void> };

/**
 * Where telemetry goes. Each write stores all of its records or none (an exporter retries a failed
 * request: a half-stored batch would duplicate its first half), with the problems its exceptions
 * belong to and the resources it came from; writing a request again stores and counts nothing.
 * The query verbs' reads are here too, so that a column store can take over spans and logs
 * (docs/telemetry.md). Problems and resources are PostgreSQL state either way.
 */
export type TelemetryStore = {
  prepareSpans(
    tenant: TelemetryTenant,
    records: SpanRecord[],
    exceptions?: ProblemOccurrence[],
  ): PreparedWrite;
  /** Spans already encoded as rows (`encodeSpanRows`, on a conversion thread): only the write is left. */
  prepareSpanRows(tenant: TelemetryTenant, rows: SpanRows, exceptions?: ProblemOccurrence[]): PreparedWrite;
  /**
   * `requestKey` (ingest.ts) is the export request's identity: a request already stored under it
   * is skipped whole.
   */
  prepareLogs(
    tenant: TelemetryTenant,
    records: LogRecordRow[],
    exceptions?: ProblemOccurrence[],
    requestKey?: string,
  ): PreparedWrite;
  prepareMetricPoints(
    tenant: TelemetryTenant,
    records: MetricPointRecord[],
    requestKey?: string,
  ): PreparedWrite;
  /** Entry-span statistics per service over a window, and when each service was last seen. */
  serviceHealth(environmentId: string, query: ServiceHealthQuery): Promise<ServiceHealthRow[]>;
  /** The same figures per time bucket, for the named services (charts). */
  serviceSeries(environmentId: string, query: ServiceSeriesQuery): Promise<ServiceSeriesRow[]>;
  /** Log records, newest first, after the keyset position `before` when given. */
  searchLogs(environmentId: string, query: LogSearch): Promise<StoredLog[]>;
  /** The spans of one trace, earliest first, at most `limit`. */
  traceSpans(environmentId: string, traceId: string, limit: number): Promise<StoredSpan[]>;
  /** Deletes everything older than `cutoff`. */
  sweep(cutoff: Date): Promise<SweepResult>;
  /**
   * Groups the error logs that waited long enough before `now` for their span's exception
   * (problems/group-deferred-logs.ts); a timer calls it, tests call it with a later `now`.
   */
  groupDeferredLogs(now: Date): Promise<number>;
  /** Stops background work (the retention and deferred-log timers). */
  close(): void;
};

export type ServiceHealthQuery = {
  /** Window bounds, ISO 8601. */
  from: string;
  to: string;
  /** Services after this name (keyset), at most `limit`. */
  after?: string | undefined;
  limit: number;
};

export type ServiceSeriesQuery = {
  services: readonly string[];
  /** Window bounds, ISO 8601; buckets start at `from`. */
  from: string;
  to: string;
  bucketSeconds: number;
};

/** One bucket of one service; buckets without entry spans are absent. */
export type ServiceSeriesRow = {
  serviceName: string;
  /** Start of the bucket, ISO 8601. */
  bucket: string;
  requests: number;
  errors: number;
  p50Ns: number;
  p95Ns: number;
  p99Ns: number;
};

export type ServiceHealthRow = {
  serviceName: string;
  /** Latest span or log record of the service, ISO 8601. */
  lastSeen: string;
  requests: number;
  errors: number;
  /** Entry-span durations in nanoseconds; null without requests in the window. */
  p50Ns: number | null;
  p95Ns: number | null;
  p99Ns: number | null;
};

export type LogSearch = {
  from: string;
  to: string;
  serviceName?: string | undefined;
  minSeverity?: number | undefined;
  /** Case-insensitive substring of the body. */
  text?: string | undefined;
  traceId?: string | undefined;
  /** Keyset: only records strictly older than (time, id). */
  before?: { time: string; id: number } | undefined;
  limit: number;
};

export type StoredLog = LogRecordRow & { id: number };

/** A span as read back: its times as ISO 8601 text with microseconds. */
export type StoredSpan = Omit<SpanRecord, "startMicros" | "endMicros"> & {
  startTime: string;
  endTime: string;
};
