-- Trace and span ids compared bytewise (COLLATE "C"): cheaper primary-key and index comparisons on
-- every ingested span (docs/performance.md, bench:ingest step 9). Same type, so no table rewrite;
-- the indexes on these columns are rebuilt (one ALTER per table: each index once).
ALTER TABLE "telemetry_logs" ALTER COLUMN "trace_id" SET DATA TYPE text COLLATE "C", ALTER COLUMN "span_id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "telemetry_spans" ALTER COLUMN "trace_id" SET DATA TYPE text COLLATE "C", ALTER COLUMN "span_id" SET DATA TYPE text COLLATE "C", ALTER COLUMN "parent_span_id" SET DATA TYPE text COLLATE "C";
