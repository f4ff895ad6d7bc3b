CREATE TABLE "problems" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"environment_id" uuid NOT NULL,
	"fingerprint" text NOT NULL,
	"title" text NOT NULL,
	"culprit" text NOT NULL,
	"service_name" text NOT NULL,
	"exception_type" text NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"revision" integer DEFAULT 1 NOT NULL,
	"count" bigint NOT NULL,
	"first_seen" timestamp (3) with time zone NOT NULL,
	"last_seen" timestamp (3) with time zone NOT NULL,
	"sample_trace_ids" text[] NOT NULL,
	"sample_message" text,
	"sample_stacktrace" text,
	"remediation_state" text,
	"resolved_at" timestamp (3) with time zone,
	"status_changed_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "telemetry_resources" (
	"environment_id" uuid NOT NULL,
	"resource_id" bigint NOT NULL,
	"organization_id" text NOT NULL,
	"service_name" text NOT NULL,
	"attributes" jsonb NOT NULL,
	"first_seen" timestamp(6) with time zone NOT NULL,
	"last_seen" timestamp(6) with time zone NOT NULL,
	CONSTRAINT "telemetry_resources_environment_id_resource_id_pk" PRIMARY KEY("environment_id","resource_id")
);
--> statement-breakpoint
DROP INDEX "telemetry_spans_env_service_start_idx";--> statement-breakpoint
ALTER TABLE "telemetry_logs" ALTER COLUMN "attributes" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "telemetry_spans" ALTER COLUMN "attributes" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "telemetry_spans" ALTER COLUMN "events" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "telemetry_spans" ALTER COLUMN "links" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "telemetry_logs" ADD COLUMN "resource_id" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "telemetry_spans" ADD COLUMN "resource_id" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "problems" ADD CONSTRAINT "problems_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "problems" ADD CONSTRAINT "problems_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "problems_env_fingerprint_uq" ON "problems" USING btree ("environment_id","fingerprint");--> statement-breakpoint
CREATE INDEX "problems_env_last_seen_idx" ON "problems" USING btree ("environment_id","last_seen","id");--> statement-breakpoint
CREATE INDEX "telemetry_spans_entry_idx" ON "telemetry_spans" USING btree ("environment_id","service_name","start_time","duration_ns","status_code") WHERE "telemetry_spans"."kind" in (2, 5) or "telemetry_spans"."parent_span_id" is null;--> statement-breakpoint
ALTER TABLE "telemetry_logs" DROP COLUMN "resource_attributes";--> statement-breakpoint
ALTER TABLE "telemetry_spans" DROP COLUMN "resource_attributes";