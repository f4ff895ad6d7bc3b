import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  customType,
  doublePrecision,
  index,
  integer,
  json,
  jsonb,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";

/** Attribute maps as stored: OTLP key/value lists flattened into one bounded JSON object. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };
export type SpanEventJson = { name: string; timeUnixNano: string; attributes: JsonObject };
export type SpanLinkJson = { traceId: string; spanId: string; attributes: JsonObject };

// Microsecond timestamps kept as ISO strings: a JavaScript Date would cut them to milliseconds.
const micros = (name: string) => timestamp(name, { withTimezone: true, precision: 6, mode: "string" });

/**
 * Trace and span ids (lowercase hex) compared bytewise: the spans' primary key compares them on
 * every inserted row, and under the database's collation that goes through the C library's
 * `strcoll` (PostgreSQL 15 treats only "C" and "POSIX" as bytewise, not `C.UTF-8`; `en_US.UTF-8`
 * is slower still). Hex sorts the same either way. bench:ingest (docs/performance.md).
 */
/** Both drivers hand bytea over as bytes (postgres.js a Buffer, PGlite a Uint8Array). */
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => "bytea" });

const hexId = customType<{ data: string; driverData: string }>({ dataType: () => 'text COLLATE "C"' });

/**
 * The resources (service, host, process, SDK attributes) that spans and logs come from. One export
 * request carries one or a few resources for hundreds of items, so items point here by
 * `resource_id` (the first 8 bytes of a SHA-256 of the attribute JSON) instead of repeating the
 * map per row: that halves the bytes PostgreSQL parses per span. `last_seen` is refreshed at most
 * hourly; retention keeps a resource while anything may still point to it. A row here also tells
 * that the environment has sent telemetry (`hasTelemetry`).
 */
export const telemetryResources = pgTable(
  "telemetry_resources",
  {
    environmentId: uuid("environment_id").notNull(),
    resourceId: bigint("resource_id", { mode: "bigint" }).notNull(),
    organizationId: text("organization_id").notNull(),
    serviceName: text("service_name").notNull(),
    attributes: jsonb("attributes").$type<JsonObject>().notNull(),
    firstSeen: micros("first_seen").notNull(),
    lastSeen: micros("last_seen").notNull(),
  },
  (t) => [primaryKey({ columns: [t.environmentId, t.resourceId] })],
);

/**
 * Telemetry is high-volume and append-only, so these tables carry no foreign keys (one index probe
 * per inserted row saved) and are pruned by retention (`sweep-telemetry.ts`), not by cascades. BRIN
 * indexes on the time columns serve the retention sweep at almost no write cost.
 */

/**
 * Spans are stored per trace, not per span: each export request's spans of one trace go into one
 * row (a "chunk") as a JSON array, found by (environment, trace id) — the only way spans are read
 * back whole. What is queried across traces (service health) reads `telemetry_entry_spans`. One
 * row and one index entry per trace and request instead of per span cut PostgreSQL's CPU per
 * stored span by about three quarters and the disk by two thirds (bench:ingest, docs/performance.md).
 * `chunk_id` is a hash of the chunk's span ids: an exporter re-sending the same request hits the
 * primary key and is skipped; a span that arrives again in a differently composed request is
 * stored again and read back once. `last_start` (the latest span start in the chunk) lets a read
 * bounded to a trace's earliest spans fetch only the chunks that can hold them.
 */
export const telemetryTraceChunks = pgTable(
  "telemetry_trace_chunks",
  {
    organizationId: text("organization_id").notNull(),
    environmentId: uuid("environment_id").notNull(),
    traceId: hexId("trace_id").notNull(),
    chunkId: hexId("chunk_id").notNull(),
    startTime: micros("start_time").notNull(),
    lastStart: micros("last_start").notNull(),
    spanCount: integer("span_count").notNull(),
    // A `TraceChunk` message (proto/patchbay/storage/v1): the spans as OTLP, mostly the bytes the
    // exporter sent (storage/stored-spans.ts). Compressed with lz4 where the server has it.
    spansProto: bytea("spans_proto"),
    // Before migration 0016: the spans as JSON text (storage/chunk-codec.ts reads both). Rows
    // have one or the other; JSON rows age out with retention.
    spans: text("spans"),
  },
  (t) => [
    primaryKey({ columns: [t.environmentId, t.traceId, t.chunkId] }),
    index("telemetry_trace_chunks_start_brin").using("brin", t.startTime),
  ],
);

/**
 * Entry spans — server and consumer spans, and trace roots (a cron job's internal root span is a
 * request too) — reduced to what service health reads, one narrow row each, under a covering
 * index: a window's latencies come from the index alone, and it lists the services (every
 * service's spans start at an entry span). `trace_id` and `chunk_id` say which chunk holds the
 * whole span (and let the retry path keep only the entries of chunks it stored).
 */
export const telemetryEntrySpans = pgTable(
  "telemetry_entry_spans",
  {
    environmentId: uuid("environment_id").notNull(),
    serviceName: text("service_name").notNull(),
    startTime: micros("start_time").notNull(),
    durationNs: bigint("duration_ns", { mode: "number" }).notNull(),
    statusCode: smallint("status_code").notNull(),
    traceId: hexId("trace_id").notNull(),
    chunkId: hexId("chunk_id").notNull(),
  },
  (t) => [
    index("telemetry_entry_spans_service_idx").on(
      t.environmentId,
      t.serviceName,
      t.startTime,
      t.durationNs,
      t.statusCode,
    ),
    index("telemetry_entry_spans_start_brin").using("brin", t.startTime),
  ],
);

/**
 * Log and metric export requests already stored, by a hash of their body: an exporter re-sending
 * one (after a lost answer, a timeout, a 503 for a later item) finds its key here and nothing is
 * stored or counted twice. Logs and data points have no identity of their own (unlike spans, whose
 * trace chunks are keyed). Only requests whose items all carry their own timestamps get a key: two
 * untimed identical requests may well be two events. Swept with the telemetry's retention.
 */
export const telemetryRequests = pgTable(
  "telemetry_requests",
  {
    environmentId: uuid("environment_id").notNull(),
    requestKey: hexId("request_key").notNull(),
    receivedAt: micros("received_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.environmentId, t.requestKey] }),
    index("telemetry_requests_received_brin").using("brin", t.receivedAt),
  ],
);

export const telemetryLogs = pgTable(
  "telemetry_logs",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    organizationId: text("organization_id").notNull(),
    environmentId: uuid("environment_id").notNull(),
    time: micros("time").notNull(),
    severityNumber: smallint("severity_number").notNull(),
    severityText: text("severity_text"),
    body: text("body"),
    serviceName: text("service_name").notNull(),
    traceId: hexId("trace_id"),
    spanId: hexId("span_id"),
    eventName: text("event_name"),
    scopeName: text("scope_name"),
    resourceId: bigint("resource_id", { mode: "bigint" }).notNull().default(sql`0`),
    attributes: json("attributes").$type<JsonObject>().notNull(),
  },
  (t) => [
    index("telemetry_logs_env_time_idx").on(t.environmentId, t.time),
    index("telemetry_logs_env_service_time_idx").on(t.environmentId, t.serviceName, t.time),
    index("telemetry_logs_env_trace_idx").on(t.environmentId, t.traceId).where(sql`${t.traceId} is not null`),
    index("telemetry_logs_time_brin").using("brin", t.time),
  ],
);

export const metricTypes = ["gauge", "sum", "histogram", "exponential_histogram", "summary"] as const;
export type MetricType = (typeof metricTypes)[number];

/** One row per data point. `value` holds gauges and sums; distributions go to `data`. */
export const telemetryMetricPoints = pgTable(
  "telemetry_metric_points",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    organizationId: text("organization_id").notNull(),
    environmentId: uuid("environment_id").notNull(),
    name: text("name").notNull(),
    type: text("type", { enum: metricTypes }).notNull(),
    unit: text("unit"),
    serviceName: text("service_name").notNull(),
    time: micros("time").notNull(),
    startTime: micros("start_time"),
    value: doublePrecision("value"),
    data: jsonb("data").$type<JsonObject>(),
    attributes: jsonb("attributes").$type<JsonObject>().notNull(),
  },
  (t) => [
    index("telemetry_metric_points_env_name_time_idx").on(t.environmentId, t.name, t.time),
    index("telemetry_metric_points_time_brin").using("brin", t.time),
  ],
);
