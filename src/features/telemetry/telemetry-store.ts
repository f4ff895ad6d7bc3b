import type { ProblemOccurrence } from "./problems/group-occurrences.ts";
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
};

/**
 * A batch made ready for storage: what it takes is CPU work done up front, so the decoded request
 * and its records can be collected before the batch waits for a writer; `write` is the I/O.
 */
export type PreparedWrite = { write(): Promise<void> };

/**
 * Where telemetry goes. Each write stores all of its records or none (a failed request is retried
 * by the exporter, so a half-stored batch would duplicate its first half), together with the
 * problems its exceptions belong to and the resources it came from. Spans are stored per trace
 * and request (a chunk, keyed by a hash of its span ids): writing the same request again is a
 * no-op and its exceptions are not counted again; a span re-sent in another request is read back
 * once. The reads behind the query verbs are here too, so that a column store can take
 * over spans and logs (docs/telemetry.md). Problems and resources are PostgreSQL state either way.
 */
export type TelemetryStore = {
  prepareSpans(
    tenant: TelemetryTenant,
    records: SpanRecord[],
    exceptions?: ProblemOccurrence[],
  ): PreparedWrite;
  /**
   * Spans already encoded in the store's row format (`encodeSpanRows`, possibly on a conversion
   * worker thread): only the write is left.
   */
  prepareSpanRows(tenant: TelemetryTenant, rows: SpanRows, exceptions?: ProblemOccurrence[]): PreparedWrite;
  /** With a `requestKey`, a request already stored under that key is skipped whole. */
  prepareLogs(
    tenant: TelemetryTenant,
    records: LogRecordRow[],
    exceptions?: ProblemOccurrence[],
    options?: RequestOptions,
  ): PreparedWrite;
  prepareMetricPoints(
    tenant: TelemetryTenant,
    records: MetricPointRecord[],
    options?: RequestOptions,
  ): PreparedWrite;
  /** Entry-span statistics per service over a window, and when each service was last seen. */
  serviceHealth(environmentId: string, query: ServiceHealthQuery): Promise<ServiceHealthRow[]>;
  /** Log records, newest first, after the keyset position `before` when given. */
  searchLogs(environmentId: string, query: LogSearch): Promise<StoredLog[]>;
  /** The spans of one trace, earliest first, at most `limit`. */
  traceSpans(environmentId: string, traceId: string, limit: number): Promise<StoredSpan[]>;
  /** Deletes everything older than `cutoff`. */
  sweep(cutoff: Date): Promise<SweepResult>;
  /** Stops background work (the retention timer). */
  close(): void;
};

/** `requestKey` (ingest.ts): the export request's identity, to store a retried one once. */
export type RequestOptions = { requestKey?: string | undefined };

export type ServiceHealthQuery = {
  /** Window bounds, ISO 8601. */
  from: string;
  to: string;
  /** Services after this name (keyset), at most `limit`. */
  after?: string | undefined;
  limit: number;
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
