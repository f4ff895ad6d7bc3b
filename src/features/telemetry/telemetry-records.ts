import type {
  JsonObject,
  MetricType,
  SpanEventJson,
  SpanLinkJson,
} from "../../platform/db/schema/telemetry.ts";

/** What telemetry is made of once decoded: the rows every part of ingest, storage and problems share. */

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
  /** Microseconds since the Unix epoch (PostgreSQL keeps microseconds). */
  startMicros: number;
  endMicros: number;
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
  /** Not stored per point: it records the resource (see telemetry_resources). */
  resourceAttributes: JsonObject;
  time: string;
  startTime: string | null;
  value: number | null;
  data: JsonObject | null;
  attributes: JsonObject;
};
