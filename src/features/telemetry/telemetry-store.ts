import type { JsonObject, MetricType, SpanEventJson, SpanLinkJson } from "../../db/schema/telemetry.ts";

/** Whose telemetry a batch is: the publishable key's organisation and environment. */
export type TelemetryTenant = { organizationId: string; environmentId: string };

/** Timestamps are ISO 8601 strings with microseconds (UTC). Ids are lowercase hex. */
export type SpanRecord = {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  serviceName: string;
  name: string;
  kind: number;
  startTime: string;
  endTime: string;
  durationNs: number;
  statusCode: number;
  statusMessage: string | null;
  scopeName: string | null;
  attributes: JsonObject;
  resourceAttributes: JsonObject;
  events: SpanEventJson[];
  links: SpanLinkJson[];
};

export type LogRecordRow = {
  time: string;
  severityNumber: number;
  severityText: string | null;
  body: string | null;
  serviceName: string;
  traceId: string | null;
  spanId: string | null;
  eventName: string | null;
  scopeName: string | null;
  attributes: JsonObject;
  resourceAttributes: JsonObject;
};

export type MetricPointRecord = {
  name: string;
  type: MetricType;
  unit: string | null;
  serviceName: string;
  time: string;
  startTime: string | null;
  value: number | null;
  data: JsonObject | null;
  attributes: JsonObject;
};

export type SweepResult = { spans: number; logs: number; metricPoints: number };

/**
 * Where telemetry goes. Each write stores all of its records or none (a failed request is retried
 * by the exporter, so a half-stored batch would duplicate its first half). Spans are keyed by
 * (environment, trace id, span id): writing one again is a no-op. The PostgreSQL implementation
 * is the only one today; docs/telemetry.md describes the column-store one.
 */
export type TelemetryStore = {
  writeSpans(tenant: TelemetryTenant, records: SpanRecord[]): Promise<void>;
  writeLogs(tenant: TelemetryTenant, records: LogRecordRow[]): Promise<void>;
  writeMetricPoints(tenant: TelemetryTenant, records: MetricPointRecord[]): Promise<void>;
  /** Deletes everything older than `cutoff`. */
  sweep(cutoff: Date): Promise<SweepResult>;
  /** Stops background work (the retention timer). */
  close(): void;
};
