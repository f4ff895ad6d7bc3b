import {
  bigint,
  bigserial,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { millis } from "./columns.ts";
import { environmentRef } from "./environments.ts";
import { organizationRef } from "./organizations.ts";

export const problemStatuses = ["open", "resolved", "regressed", "ignored"] as const;
export type ProblemStatus = (typeof problemStatuses)[number];

/** How many sample trace ids a problem keeps (newest first). */
export const MAX_SAMPLE_TRACE_IDS = 10;

/**
 * Detected problems (DESIGN §8): exceptions from span events and error logs, grouped by
 * fingerprint. Unlike the telemetry tables this is low-volume state a human changes (status), so
 * it has foreign keys and a revision; ingest upserts one row per fingerprint per batch.
 */
export const problems = pgTable(
  "problems",
  {
    id: text("id").primaryKey(),
    organizationId: organizationRef(),
    environmentId: environmentRef(),
    fingerprint: text("fingerprint").notNull(),
    title: text("title").notNull(),
    culprit: text("culprit").notNull(),
    serviceName: text("service_name").notNull(),
    exceptionType: text("exception_type").notNull(),
    status: text("status", { enum: problemStatuses }).notNull().default("open"),
    /** +1 per status change (a person's, or an automatic regression), not per occurrence. */
    revision: integer("revision").notNull().default(1),
    count: bigint("count", { mode: "number" }).notNull(),
    firstSeen: millis("first_seen").notNull(),
    lastSeen: millis("last_seen").notNull(),
    sampleTraceIds: text("sample_trace_ids").array().notNull(),
    /** The latest occurrence's message (unmasked) and its stack trace, when one had a stack. */
    sampleMessage: text("sample_message"),
    sampleStacktrace: text("sample_stacktrace"),
    /**
     * Error logs of the failing spans of its occurrences (same trace and span): evidence on the
     * problem, not occurrences of their own, so not in `count`. The latest one's message.
     */
    logCount: bigint("log_count", { mode: "number" }).notNull().default(0),
    sampleLogMessage: text("sample_log_message"),
    resolvedAt: millis("resolved_at"),
    statusChangedAt: millis("status_changed_at"),
    createdAt: millis("created_at").notNull().defaultNow(),
    updatedAt: millis("updated_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("problems_env_fingerprint_uq").on(t.environmentId, t.fingerprint),
    // The list: newest activity first, keyset over (last_seen, id).
    index("problems_env_last_seen_idx").on(t.environmentId, t.lastSeen, t.id),
  ],
);

const hexId = customType<{ data: string; driverData: string }>({ dataType: () => 'text COLLATE "C"' });
const micros = (name: string) => timestamp(name, { withTimezone: true, precision: 6, mode: "string" });

/**
 * Which problem each span's exception went to (its latest exception, when it has several), so that
 * error logs of that span count as evidence on that problem (problems/link-logs.ts). Written with
 * the span's problem upsert; kept as long as telemetry (retention).
 */
export const problemSpans = pgTable(
  "problem_spans",
  {
    environmentId: uuid("environment_id").notNull(),
    traceId: hexId("trace_id").notNull(),
    spanId: hexId("span_id").notNull(),
    fingerprint: text("fingerprint").notNull(),
    recordedAt: micros("recorded_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.environmentId, t.traceId, t.spanId] }),
    index("problem_spans_recorded_brin").using("brin", t.recordedAt),
  ],
);

/**
 * Error logs with trace context whose span had no known problem when they arrived: they wait here
 * (a bounded time) for their span's exception before being grouped on their own
 * (problems/group-deferred-logs.ts). `occurrence` is the identified occurrence as JSON.
 */
export const problemDeferredLogs = pgTable(
  "problem_deferred_logs",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    organizationId: text("organization_id").notNull(),
    environmentId: uuid("environment_id").notNull(),
    occurrence: jsonb("occurrence").notNull(),
    receivedAt: micros("received_at").notNull(),
  },
  (t) => [index("problem_deferred_logs_received_idx").on(t.receivedAt)],
);
