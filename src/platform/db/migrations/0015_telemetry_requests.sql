CREATE TABLE "telemetry_requests" (
	"environment_id" uuid NOT NULL,
	"request_key" text COLLATE "C" NOT NULL,
	"received_at" timestamp(6) with time zone NOT NULL,
	CONSTRAINT "telemetry_requests_environment_id_request_key_pk" PRIMARY KEY("environment_id","request_key")
);
--> statement-breakpoint
CREATE INDEX "telemetry_requests_received_brin" ON "telemetry_requests" USING brin ("received_at");