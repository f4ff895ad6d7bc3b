CREATE TABLE "task_connection_checks" (
	"task_id" text NOT NULL,
	"connection_id" text NOT NULL,
	"result" text NOT NULL,
	"checked_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "task_connection_checks_task_id_connection_id_pk" PRIMARY KEY("task_id","connection_id")
);
--> statement-breakpoint
CREATE TABLE "task_tool_calls" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"task_id" text NOT NULL,
	"model_tool_name" text NOT NULL,
	"connection_id" text,
	"connection_revision" integer,
	"tool_name" text NOT NULL,
	"started_at" timestamp (3) with time zone NOT NULL,
	"duration_ms" integer NOT NULL,
	"outcome" text NOT NULL,
	"error_code" text
);
--> statement-breakpoint
CREATE TABLE "tasks" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"environment_id" uuid NOT NULL,
	"kind" text DEFAULT 'agent' NOT NULL,
	"instructions" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"error_code" text,
	"error_message" text,
	"summary" text,
	"snapshot" jsonb NOT NULL,
	"budgets" jsonb NOT NULL,
	"usage" jsonb NOT NULL,
	"transcript" jsonb NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone,
	"cancel_requested_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "task_connection_checks" ADD CONSTRAINT "task_connection_checks_task_id_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."tasks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_tool_calls" ADD CONSTRAINT "task_tool_calls_task_id_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."tasks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "task_tool_calls_task_idx" ON "task_tool_calls" USING btree ("task_id","id");--> statement-breakpoint
CREATE INDEX "tasks_env_page_idx" ON "tasks" USING btree ("environment_id","created_at","id");--> statement-breakpoint
CREATE INDEX "tasks_status_idx" ON "tasks" USING btree ("status");