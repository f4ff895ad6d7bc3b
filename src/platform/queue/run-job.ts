import type PgBoss from "pg-boss";
import type { Logger } from "../logging/logger.ts";

export type JobData = Record<string, unknown>;

export type Job = {
  id: string;
  data: JobData;
  /**
   * Aborted when this run no longer owns the job: it outlived its queue's `expireInSeconds`, or
   * `stop()` gave up waiting for it. The job may then be resumed elsewhere, so stop side effects.
   */
  signal: AbortSignal;
};

export type JobHandler = (job: Job) => Promise<void>;

/**
 * One run of one job. `running` holds the abort controllers of the runs in progress, for `stop()`.
 * A throw is logged and rethrown: pg-boss then fails the job (or retries it, per retryLimit).
 */
export async function runJob(args: {
  queue: string;
  job: PgBoss.Job<JobData>;
  handler: JobHandler;
  running: Map<string, AbortController>;
  logger: Logger;
}): Promise<void> {
  const { queue, job, running } = args;
  const controller = new AbortController();
  running.set(job.id, controller);
  // pg-boss fails a run that outlives its expiration, though the promise goes on: tell it.
  // (pg-boss reports expireInSeconds as a numeric string.)
  const expiry = setTimeout(
    () => controller.abort(new Error("job run expired")),
    Math.max(1, Number(job.expireInSeconds)) * 1000,
  );
  try {
    await args.handler({ id: job.id, data: job.data, signal: controller.signal });
  } catch (err) {
    args.logger.warn({ err, queue, jobId: job.id }, "job handler failed");
    throw err;
  } finally {
    clearTimeout(expiry);
    running.delete(job.id);
  }
}
