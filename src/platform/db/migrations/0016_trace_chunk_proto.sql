-- Trace chunks store their spans as a protobuf TraceChunk (proto/patchbay/storage/v1), mostly the
-- bytes the exporter sent, instead of JSON text built per span (docs/performance.md, step 13).
-- Rows written before keep their JSON in "spans" and are read as before until retention removes
-- them; no rewrite of stored data, and no lock held longer than the catalog change.
ALTER TABLE "telemetry_trace_chunks" ALTER COLUMN "spans" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "telemetry_trace_chunks" ADD COLUMN "spans_proto" "bytea";--> statement-breakpoint
-- Exactly one of the two per row (NOT VALID: existing rows are known to have "spans"; no scan).
ALTER TABLE "telemetry_trace_chunks" ADD CONSTRAINT "telemetry_trace_chunks_one_format"
  CHECK (num_nonnulls("spans", "spans_proto") = 1) NOT VALID;--> statement-breakpoint
-- lz4 where the server was built with it, as for "spans" (migration 0014); elsewhere no
-- compression rather than pglz.
DO $$ BEGIN
  ALTER TABLE "telemetry_trace_chunks" ALTER COLUMN "spans_proto" SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  ALTER TABLE "telemetry_trace_chunks" ALTER COLUMN "spans_proto" SET STORAGE EXTERNAL;
END $$;
