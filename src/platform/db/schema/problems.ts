import { bigint, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
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
