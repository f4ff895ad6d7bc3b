import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  customType,
  doublePrecision,
  index,
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
 * is slower still). Hex sorts the same either way. bench:ingest: docs/performance.md, step 9.
 */
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
export const telemetrySpans = pgTable(
  "telemetry_spans",
  {
    organizationId: text("organization_id").notNull(),
    environmentId: uuid("environment_id").notNull(),
    traceId: hexId("trace_id").notNull(),
    spanId: hexId("span_id").notNull(),
    parentSpanId: hexId("parent_span_id"),
    serviceName: text("service_name").notNull(),
    name: text("name").notNull(),
    kind: smallint("kind").notNull(),
    startTime: micros("start_time").notNull(),
    endTime: micros("end_time").notNull(),
    durationNs: bigint("duration_ns", { mode: "number" }).notNull(),
    statusCode: smallint("status_code").notNull(),
    statusMessage: text("status_message"),
    scopeName: text("scope_name"),
    resourceId: bigint("resource_id", { mode: "bigint" }).notNull().default(sql`0`),
    // json, not jsonb: written once per span and read back whole, never searched inside, and
    // PostgreSQL only validates json on input where it builds a tree for jsonb (bench:ingest).
    attributes: json("attributes").$type<JsonObject>().notNull(),
    events: json("events").$type<SpanEventJson[]>().notNull(),
    links: json("links").$type<SpanLinkJson[]>().notNull(),
  },
  (t) => [
    // Also the lookup of a trace: (environment, trace id). Re-sent spans (exporter retries) hit
    // this key and are skipped, so a retry never duplicates a span.
    primaryKey({ columns: [t.environmentId, t.traceId, t.spanId] }),
    // Service health reads entry spans only (server and consumer spans, and roots): a covering
    // partial index, so a window's latencies come from the index alone. It also lists services
    // (every service's spans start at an entry span); spans have no index on all of (service,
    // time) — on a write path this hot, each index costs ~2 µs of PostgreSQL CPU per span.
    index("telemetry_spans_entry_idx")
      .on(t.environmentId, t.serviceName, t.startTime, t.durationNs, t.statusCode)
      .where(sql`${t.kind} in (2, 5) or ${t.parentSpanId} is null`),
    index("telemetry_spans_start_brin").using("brin", t.startTime),
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
