CREATE TABLE "task_call_approvals" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"environment_id" uuid NOT NULL,
	"task_id" text NOT NULL,
	"connection_id" text NOT NULL,
	"connection_revision" integer NOT NULL,
	"tool_name" text NOT NULL,
	"model_tool_name" text NOT NULL,
	"arguments" jsonb NOT NULL,
	"arguments_hash" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"requested_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"decided_by" text,
	"decided_at" timestamp (3) with time zone,
	"used_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "mcp_connections" ADD COLUMN "attested_read_tools" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "task_tool_calls" ADD COLUMN "call_approval_id" text;--> statement-breakpoint
ALTER TABLE "task_tool_calls" ADD COLUMN "approved_by" text;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "awaiting_call_approval" jsonb;--> statement-breakpoint
ALTER TABLE "task_call_approvals" ADD CONSTRAINT "task_call_approvals_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_call_approvals" ADD CONSTRAINT "task_call_approvals_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_call_approvals" ADD CONSTRAINT "task_call_approvals_task_id_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."tasks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "task_call_approvals_task_idx" ON "task_call_approvals" USING btree ("task_id","requested_at","id");