CREATE TABLE "problem_deferred_logs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"environment_id" uuid NOT NULL,
	"occurrence" jsonb NOT NULL,
	"received_at" timestamp(6) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "problem_spans" (
	"environment_id" uuid NOT NULL,
	"trace_id" text COLLATE "C" NOT NULL,
	"span_id" text COLLATE "C" NOT NULL,
	"fingerprint" text NOT NULL,
	"recorded_at" timestamp(6) with time zone NOT NULL,
	CONSTRAINT "problem_spans_environment_id_trace_id_span_id_pk" PRIMARY KEY("environment_id","trace_id","span_id")
);
--> statement-breakpoint
ALTER TABLE "problems" ADD COLUMN "log_count" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "problems" ADD COLUMN "sample_log_message" text;--> statement-breakpoint
CREATE INDEX "problem_deferred_logs_received_idx" ON "problem_deferred_logs" USING btree ("received_at");--> statement-breakpoint
CREATE INDEX "problem_spans_recorded_brin" ON "problem_spans" USING brin ("recorded_at");