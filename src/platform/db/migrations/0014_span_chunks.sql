-- Spans stored per trace and request ("chunks") plus a narrow table of entry spans for service
-- health, instead of one row per span: docs/telemetry.md, docs/performance.md (bench:ingest, step 11).
-- Spans already stored move over: one chunk per trace, entry spans copied, then the old table goes.
CREATE TABLE "telemetry_entry_spans" (
	"environment_id" uuid NOT NULL,
	"service_name" text NOT NULL,
	"start_time" timestamp(6) with time zone NOT NULL,
	"duration_ns" bigint NOT NULL,
	"status_code" smallint NOT NULL,
	"trace_id" text COLLATE "C" NOT NULL,
	"chunk_id" text COLLATE "C" NOT NULL
);
--> statement-breakpoint
CREATE TABLE "telemetry_trace_chunks" (
	"organization_id" text NOT NULL,
	"environment_id" uuid NOT NULL,
	"trace_id" text COLLATE "C" NOT NULL,
	"chunk_id" text COLLATE "C" NOT NULL,
	"start_time" timestamp(6) with time zone NOT NULL,
	"last_start" timestamp(6) with time zone NOT NULL,
	"span_count" integer NOT NULL,
	"spans" text NOT NULL,
	CONSTRAINT "telemetry_trace_chunks_environment_id_trace_id_chunk_id_pk" PRIMARY KEY("environment_id","trace_id","chunk_id")
);
--> statement-breakpoint
-- lz4 where the server was built with it (Debian's PostgreSQL is): fast enough to pay for itself in
-- less WAL and disk. Elsewhere (PGlite) no compression rather than pglz, which costs more CPU than
-- the rest of the insert.
DO $$ BEGIN
  ALTER TABLE "telemetry_trace_chunks" ALTER COLUMN "spans" SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  ALTER TABLE "telemetry_trace_chunks" ALTER COLUMN "spans" SET STORAGE EXTERNAL;
END $$;--> statement-breakpoint
INSERT INTO "telemetry_trace_chunks"
  ("organization_id", "environment_id", "trace_id", "chunk_id", "start_time", "last_start", "span_count", "spans")
SELECT "organization_id", "environment_id", "trace_id",
       substr(md5(string_agg("span_id", '' ORDER BY "span_id")), 1, 16),
       min("start_time"), max("start_time"), count(*)::integer,
       json_agg(json_build_object(
         'spanId', "span_id", 'parentSpanId', "parent_span_id", 'serviceName', "service_name",
         'name', "name", 'kind', "kind",
         'startMicros', (extract(epoch FROM "start_time") * 1000000)::bigint,
         'endMicros', (extract(epoch FROM "end_time") * 1000000)::bigint,
         'durationNs', "duration_ns", 'statusCode', "status_code", 'statusMessage', "status_message",
         'scopeName', "scope_name", 'resourceId', "resource_id"::text, 'attributes', "attributes",
         'events', "events", 'links', "links"
       ) ORDER BY "start_time", "span_id")::text
  FROM "telemetry_spans"
 GROUP BY "organization_id", "environment_id", "trace_id";--> statement-breakpoint
INSERT INTO "telemetry_entry_spans"
  ("environment_id", "service_name", "start_time", "duration_ns", "status_code", "trace_id", "chunk_id")
SELECT s."environment_id", s."service_name", s."start_time", s."duration_ns", s."status_code", s."trace_id", c."chunk_id"
  FROM "telemetry_spans" s
  JOIN "telemetry_trace_chunks" c ON c."environment_id" = s."environment_id" AND c."trace_id" = s."trace_id"
 WHERE s."kind" IN (2, 5) OR s."parent_span_id" IS NULL;--> statement-breakpoint
DROP TABLE "telemetry_spans" CASCADE;--> statement-breakpoint
CREATE INDEX "telemetry_entry_spans_service_idx" ON "telemetry_entry_spans" USING btree ("environment_id","service_name","start_time","duration_ns","status_code");--> statement-breakpoint
CREATE INDEX "telemetry_entry_spans_start_brin" ON "telemetry_entry_spans" USING brin ("start_time");--> statement-breakpoint
CREATE INDEX "telemetry_trace_chunks_start_brin" ON "telemetry_trace_chunks" USING brin ("start_time");