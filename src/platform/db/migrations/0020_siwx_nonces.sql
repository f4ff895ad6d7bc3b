CREATE TABLE "siwx_nonces" (
	"nonce" text PRIMARY KEY NOT NULL,
	"uri" text NOT NULL,
	"network" text NOT NULL,
	"issued_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"used_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE INDEX "siwx_nonces_expiry_idx" ON "siwx_nonces" USING btree ("expires_at");