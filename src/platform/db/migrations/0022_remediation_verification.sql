ALTER TABLE "remediations" ADD COLUMN "verification" jsonb;--> statement-breakpoint
ALTER TABLE "remediations" ADD COLUMN "watch" jsonb;