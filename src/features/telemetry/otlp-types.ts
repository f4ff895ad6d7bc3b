/**
 * The decoded OTLP messages as this code reads them. Every field is optional: protobuf decoding
 * leaves defaults on the prototype, ProtoJSON parsing leaves them out. 64-bit integers arrive as
 * long.js `Long` objects (protobufjs uses long.js when it is installed, as it is here).
 */
export type Int64 = { low: number; high: number; unsigned: boolean } | number | string;
export type Bytes = Uint8Array;

export type AnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: Int64;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] } | null;
  kvlistValue?: { values?: KeyValue[] } | null;
  bytesValue?: Bytes;
};
export type KeyValue = { key?: string; value?: AnyValue | null };

export type Resource = { attributes?: KeyValue[] } | null;
export type Scope = { name?: string } | null;

export type Span = {
  traceId?: Bytes;
  spanId?: Bytes;
  parentSpanId?: Bytes;
  name?: string;
  kind?: number;
  startTimeUnixNano?: Int64;
  endTimeUnixNano?: Int64;
  attributes?: KeyValue[];
  events?: { timeUnixNano?: Int64; name?: string; attributes?: KeyValue[] }[];
  links?: { traceId?: Bytes; spanId?: Bytes; attributes?: KeyValue[] }[];
  status?: { message?: string; code?: number } | null;
};

export type TraceRequest = {
  resourceSpans?: { resource?: Resource; scopeSpans?: { scope?: Scope; spans?: Span[] }[] }[];
};

export type LogRecord = {
  timeUnixNano?: Int64;
  observedTimeUnixNano?: Int64;
  severityNumber?: number;
  severityText?: string;
  body?: AnyValue | null;
  attributes?: KeyValue[];
  traceId?: Bytes;
  spanId?: Bytes;
  eventName?: string;
};

export type LogsRequest = {
  resourceLogs?: { resource?: Resource; scopeLogs?: { scope?: Scope; logRecords?: LogRecord[] }[] }[];
};

/** A data point of any metric type; each type has some of these fields. */
export type DataPoint = {
  attributes?: KeyValue[];
  startTimeUnixNano?: Int64;
  timeUnixNano?: Int64;
  asDouble?: number;
  asInt?: Int64;
  count?: Int64;
  sum?: number;
  min?: number;
  max?: number;
  bucketCounts?: Int64[];
  explicitBounds?: number[];
  scale?: number;
  zeroCount?: Int64;
  zeroThreshold?: number;
  positive?: Buckets;
  negative?: Buckets;
  quantileValues?: { quantile?: number; value?: number }[];
};
type Buckets = { offset?: number; bucketCounts?: Int64[] } | null;
export type Points = { dataPoints?: DataPoint[]; aggregationTemporality?: number; isMonotonic?: boolean };

export type Metric = {
  name?: string;
  unit?: string;
  gauge?: Points | null;
  sum?: Points | null;
  histogram?: Points | null;
  exponentialHistogram?: Points | null;
  summary?: Points | null;
};

export type MetricsRequest = {
  resourceMetrics?: { resource?: Resource; scopeMetrics?: { scope?: Scope; metrics?: Metric[] }[] }[];
};
