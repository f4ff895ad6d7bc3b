import type { Deps } from "../../deps.ts";
import { REMEDIATION_QUEUE } from "../tasks/task-queue.ts";
import { runRemediationStep } from "./run-step.ts";

/** Runs remediation steps on this instance; pg-boss hands each job to one worker at a time. */
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
      await runRemediationStep(deps, { remediationId, stepSeq }, job.signal);
    },
    { concurrency: opts.concurrency ?? 2 },
  );
}
