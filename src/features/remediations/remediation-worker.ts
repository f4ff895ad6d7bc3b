import { eq } from "drizzle-orm";
import { systemContext } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { remediations } from "../../platform/db/schema/remediations.ts";
import { REMEDIATION_QUEUE } from "../tasks/task-queue.ts";
import { runRemediationStep } from "./run-step.ts";

/**
 * Runs remediation steps on this instance; pg-boss hands each job to one worker at a time, and
 * the system runs it acting for the organisation that owns the run.
 */
export async function registerRemediationWorker(
  deps: Deps,
  opts: { concurrency?: number } = {},
): Promise<void> {
  await deps.jobs.work(
    REMEDIATION_QUEUE,
    async (job) => {
      const { remediationId, stepSeq } = job.data;
      if (typeof remediationId !== "string" || typeof stepSeq !== "number") {
        throw new Error("remediation job without remediationId/stepSeq");
      }
      const [run] = await deps.db
        .select({ organizationId: remediations.organizationId })
        .from(remediations)
        .where(eq(remediations.id, remediationId));
      if (!run) return;
      const ctx = systemContext(deps, {
        name: "remediation-step",
        id: `${remediationId}:${stepSeq}`,
        organizationId: run.organizationId,
      });
      await runRemediationStep({ ctx, input: { remediationId, stepSeq }, signal: job.signal });
    },
    { concurrency: opts.concurrency ?? 2 },
  );
}
