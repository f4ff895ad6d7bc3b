CREATE TABLE "sign_in_limits" (
	"key" text PRIMARY KEY NOT NULL,
	"attempts" integer NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"not_before" timestamp (3) with time zone
);
