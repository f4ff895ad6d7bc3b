CREATE TABLE "deletion_receipts" (
	"receipt_hash" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"connection_id" text NOT NULL,
	"connection_revision" integer NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"used_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "mcp_connections" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"environment_id" uuid NOT NULL,
	"alias" text NOT NULL,
	"display_name" text NOT NULL,
	"endpoint_url" text NOT NULL,
	"endpoint_origin" text NOT NULL,
	"auth_kind" text NOT NULL,
	"auth_header_name" text,
	"enabled" boolean DEFAULT false NOT NULL,
	"revision" integer DEFAULT 1 NOT NULL,
	"config_version" integer DEFAULT 1 NOT NULL,
	"credential_version" integer DEFAULT 0 NOT NULL,
	"credential_updated_at" timestamp (3) with time zone,
	"latest_discovery_id" text,
	"approved_at" timestamp (3) with time zone,
	"approved_by" text,
	"approved_config_version" integer,
	"approved_manifest" jsonb,
	"approved_manifest_hash" text,
	"approved_tool_count" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mcp_discoveries" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"environment_id" uuid NOT NULL,
	"connection_id" text NOT NULL,
	"connection_revision" integer NOT NULL,
	"config_version" integer NOT NULL,
	"manifest_hash" text NOT NULL,
	"tool_count" integer NOT NULL,
	"tools" jsonb NOT NULL,
	"discovered_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "vault_secrets" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"environment_id" uuid NOT NULL,
	"connection_id" text NOT NULL,
	"credential_version" integer NOT NULL,
	"kek_version" integer NOT NULL,
	"wrapped_key" text NOT NULL,
	"wrap_iv" text NOT NULL,
	"iv" text NOT NULL,
	"ciphertext" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"rewrapped_at" timestamp (3) with time zone,
	CONSTRAINT "vault_secrets_connection_id_unique" UNIQUE("connection_id")
);
--> statement-breakpoint
ALTER TABLE "mcp_connections" ADD CONSTRAINT "mcp_connections_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mcp_connections" ADD CONSTRAINT "mcp_connections_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mcp_discoveries" ADD CONSTRAINT "mcp_discoveries_connection_id_mcp_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."mcp_connections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vault_secrets" ADD CONSTRAINT "vault_secrets_connection_id_mcp_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."mcp_connections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "mcp_connections_env_alias_uq" ON "mcp_connections" USING btree ("environment_id","alias");--> statement-breakpoint
CREATE INDEX "mcp_connections_env_page_idx" ON "mcp_connections" USING btree ("environment_id","created_at","id");--> statement-breakpoint
CREATE INDEX "mcp_discoveries_connection_idx" ON "mcp_discoveries" USING btree ("connection_id","discovered_at");