ALTER TABLE "audit_log" ADD COLUMN "actor_user_id" text;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "channel" text DEFAULT 'unknown' NOT NULL;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "environment_id" text;--> statement-breakpoint
CREATE INDEX "audit_log_org_env_idx" ON "audit_log" USING btree ("organization_id","environment_id","created_at");--> statement-breakpoint
-- Rows written before the door was recorded: the doors the actor type alone tells; API keys and
-- OAuth tokens serve REST, the CLI and /mcp alike, so theirs stay 'unknown'.
UPDATE "audit_log" SET "channel" = CASE "actor_type"
  WHEN 'web_session' THEN 'web'
  WHEN 'user' THEN 'web'
  WHEN 'wallet' THEN 'x402'
  WHEN 'onboarding_session' THEN 'x402'
  WHEN 'system' THEN 'system'
  ELSE 'unknown' END;--> statement-breakpoint
UPDATE "audit_log" a SET "actor_user_id" = k."user_id" FROM "api_keys" k
  WHERE a."actor_type" = 'api_key' AND k."id" = a."actor_id";--> statement-breakpoint
UPDATE "audit_log" a SET "actor_user_id" = g."user_id" FROM "oauth_grants" g
  WHERE a."actor_type" = 'oauth_token' AND g."id" = a."actor_id";--> statement-breakpoint
UPDATE "audit_log" a SET "actor_user_id" = s."user_id" FROM "web_sessions" s
  WHERE a."actor_type" = 'web_session' AND s."id" = a."actor_id";--> statement-breakpoint
UPDATE "audit_log" SET "actor_user_id" = "actor_id" WHERE "actor_type" = 'user';--> statement-breakpoint
UPDATE "audit_log" SET "environment_id" = "details"->>'environmentId'
  WHERE "details" ? 'environmentId';--> statement-breakpoint
UPDATE "audit_log" a SET "environment_id" = c."environment_id" FROM "mcp_connections" c
  WHERE a."environment_id" IS NULL AND a."target_type" = 'mcp_connection' AND c."id" = a."target_id";--> statement-breakpoint
UPDATE "audit_log" a SET "environment_id" = t."environment_id" FROM "tasks" t
  WHERE a."environment_id" IS NULL AND a."target_type" = 'task' AND t."id" = a."target_id";--> statement-breakpoint
UPDATE "audit_log" a SET "environment_id" = r."environment_id" FROM "remediations" r
  WHERE a."environment_id" IS NULL AND a."target_type" = 'remediation' AND r."id" = a."target_id";--> statement-breakpoint
UPDATE "audit_log" SET "environment_id" = "target_id"
  WHERE "environment_id" IS NULL AND "target_type" = 'environment';
