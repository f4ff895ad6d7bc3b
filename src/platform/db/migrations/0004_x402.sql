CREATE TABLE "x402_payments" (
	"network" text NOT NULL,
	"asset" text NOT NULL,
	"payer" text NOT NULL,
	"nonce" text NOT NULL,
	"payment_hash" text NOT NULL,
	"request_hash" text NOT NULL,
	"route" text NOT NULL,
	"amount" text NOT NULL,
	"requirements" jsonb NOT NULL,
	"state" text NOT NULL,
	"claim_id" text NOT NULL,
	"transaction" text,
	"response_status" integer,
	"response_headers" jsonb,
	"response_body" text,
	"claimed_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "x402_payments_network_asset_payer_nonce_pk" PRIMARY KEY("network","asset","payer","nonce")
);
--> statement-breakpoint
CREATE INDEX "x402_payments_expiry_idx" ON "x402_payments" USING btree ("expires_at");