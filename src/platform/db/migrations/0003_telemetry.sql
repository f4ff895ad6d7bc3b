CREATE TABLE "publishable_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"environment_id" uuid NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"key_hash" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone,
	CONSTRAINT "publishable_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "telemetry_logs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"environment_id" uuid NOT NULL,
	"time" timestamp(6) with time zone NOT NULL,
	"severity_number" smallint NOT NULL,
	"severity_text" text,
	"body" text,
	"service_name" text NOT NULL,
	"trace_id" text,
	"span_id" text,
	"event_name" text,
	"scope_name" text,
	"attributes" jsonb NOT NULL,
	"resource_attributes" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "telemetry_metric_points" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"environment_id" uuid NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"unit" text,
	"service_name" text NOT NULL,
	"time" timestamp(6) with time zone NOT NULL,
	"start_time" timestamp(6) with time zone,
	"value" double precision,
	"data" jsonb,
	"attributes" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "telemetry_spans" (
	"organization_id" text NOT NULL,
	"environment_id" uuid NOT NULL,
	"trace_id" text NOT NULL,
	"span_id" text NOT NULL,
	"parent_span_id" text,
	"service_name" text NOT NULL,
	"name" text NOT NULL,
	"kind" smallint NOT NULL,
	"start_time" timestamp(6) with time zone NOT NULL,
	"end_time" timestamp(6) with time zone NOT NULL,
	"duration_ns" bigint NOT NULL,
	"status_code" smallint NOT NULL,
	"status_message" text,
	"scope_name" text,
	"attributes" jsonb NOT NULL,
	"resource_attributes" jsonb NOT NULL,
	"events" jsonb NOT NULL,
	"links" jsonb NOT NULL,
	CONSTRAINT "telemetry_spans_environment_id_trace_id_span_id_pk" PRIMARY KEY("environment_id","trace_id","span_id")
);
--> statement-breakpoint
ALTER TABLE "publishable_keys" ADD CONSTRAINT "publishable_keys_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "publishable_keys" ADD CONSTRAINT "publishable_keys_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "publishable_keys_env_page_idx" ON "publishable_keys" USING btree ("environment_id","created_at","id");--> statement-breakpoint
CREATE INDEX "telemetry_logs_env_time_idx" ON "telemetry_logs" USING btree ("environment_id","time");--> statement-breakpoint
CREATE INDEX "telemetry_logs_env_service_time_idx" ON "telemetry_logs" USING btree ("environment_id","service_name","time");--> statement-breakpoint
CREATE INDEX "telemetry_logs_env_trace_idx" ON "telemetry_logs" USING btree ("environment_id","trace_id") WHERE "telemetry_logs"."trace_id" is not null;--> statement-breakpoint
CREATE INDEX "telemetry_logs_time_brin" ON "telemetry_logs" USING brin ("time");--> statement-breakpoint
CREATE INDEX "telemetry_metric_points_env_name_time_idx" ON "telemetry_metric_points" USING btree ("environment_id","name","time");--> statement-breakpoint
CREATE INDEX "telemetry_metric_points_time_brin" ON "telemetry_metric_points" USING brin ("time");--> statement-breakpoint
CREATE INDEX "telemetry_spans_env_service_start_idx" ON "telemetry_spans" USING btree ("environment_id","service_name","start_time");--> statement-breakpoint
CREATE INDEX "telemetry_spans_start_brin" ON "telemetry_spans" USING brin ("start_time");