ALTER TABLE "remediations" ALTER COLUMN "problem_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "remediations" ADD COLUMN "kind" text DEFAULT 'fix' NOT NULL;