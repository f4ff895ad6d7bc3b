CREATE TABLE "remediation_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"remediation_id" text NOT NULL,
	"at" timestamp (3) with time zone NOT NULL,
	"type" text NOT NULL,
	"status" text,
	"message" text NOT NULL,
	"data" jsonb
);
--> statement-breakpoint
CREATE TABLE "remediations" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"environment_id" uuid NOT NULL,
	"problem_id" text NOT NULL,
	"service" text,
	"repository_id" text,
	"status" text DEFAULT 'queued' NOT NULL,
	"reason_code" text,
	"reason" text,
	"approval" jsonb,
	"requested_by" text NOT NULL,
	"task_id" text,
	"budgets" jsonb NOT NULL,
	"branch" text,
	"base_commit" text,
	"head_commit" text,
	"change" jsonb,
	"validation" jsonb,
	"pr_url" text,
	"pr_number" integer,
	"step_seq" integer DEFAULT 0 NOT NULL,
	"lease" integer DEFAULT 0 NOT NULL,
	"cancel_requested_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "github_installations" (
	"installation_id" bigint PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"account" text NOT NULL,
	"installed_by" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "repositories" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"environment_id" uuid NOT NULL,
	"provider" text NOT NULL,
	"path" text,
	"installation_id" bigint,
	"full_name" text,
	"default_branch" text NOT NULL,
	"test_command" text NOT NULL,
	"services" jsonb NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "remediation_events" ADD CONSTRAINT "remediation_events_remediation_id_remediations_id_fk" FOREIGN KEY ("remediation_id") REFERENCES "public"."remediations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "remediations" ADD CONSTRAINT "remediations_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "remediations" ADD CONSTRAINT "remediations_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "remediations" ADD CONSTRAINT "remediations_repository_id_repositories_id_fk" FOREIGN KEY ("repository_id") REFERENCES "public"."repositories"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "remediations" ADD CONSTRAINT "remediations_task_id_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."tasks"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "github_installations" ADD CONSTRAINT "github_installations_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "repositories" ADD CONSTRAINT "repositories_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "repositories" ADD CONSTRAINT "repositories_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "remediation_events_run_idx" ON "remediation_events" USING btree ("remediation_id","id");--> statement-breakpoint
CREATE INDEX "remediations_env_page_idx" ON "remediations" USING btree ("environment_id","created_at","id");--> statement-breakpoint
CREATE INDEX "remediations_env_status_idx" ON "remediations" USING btree ("environment_id","status");--> statement-breakpoint
CREATE INDEX "remediations_problem_idx" ON "remediations" USING btree ("environment_id","problem_id");--> statement-breakpoint
CREATE INDEX "github_installations_org_idx" ON "github_installations" USING btree ("organization_id");--> statement-breakpoint
CREATE INDEX "repositories_env_page_idx" ON "repositories" USING btree ("environment_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "repositories_env_path_uq" ON "repositories" USING btree ("environment_id","path");--> statement-breakpoint
CREATE UNIQUE INDEX "repositories_env_full_name_uq" ON "repositories" USING btree ("environment_id","full_name");