import { eq } from "drizzle-orm";
import { systemContext } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";
import type { QueueOptions } from "../../platform/queue/queue.ts";
import { webhookQueues } from "../webhooks/index.ts";
import { runTask } from "./run-task-lazily.ts";

/** The job queue tasks run on (src/platform/queue). */
export const TASK_QUEUE = "tasks.run";

/** The job queue remediation runs advance on, one job per step. */
export const REMEDIATION_QUEUE = "remediations.step";

/**
 * Every queue the service uses. A task run may take up to its 1 h time budget, so a run is only
 * given up (and its task marked interrupted by the next delivery) after that.
 */
export const jobQueues: Record<string, QueueOptions> = {
  [TASK_QUEUE]: { expireInSeconds: 60 * 60 + 5 * 60 },
  // One step of a remediation run (src/features/remediations/run-step.ts). "stately": at most
  // one queued and one active job per run (singletonKey = the run's id), on every instance.
  [REMEDIATION_QUEUE]: { policy: "stately", expireInSeconds: 60 * 60 + 5 * 60 },
  // Webhook deliveries, one job per attempt (src/features/webhooks/deliver.ts).
  ...webhookQueues,
};

/** Names the runtime's own tools take; snapshot tools never get them. */
export const BUILTIN_TOOL_NAMES = [
  "finish",
  "get_problem",
  "search_logs",
  "get_trace",
  "list_files",
  "read_file",
  "search_files",
  "write_file",
  "check_reproduction",
  "run_tests",
];

/**
 * Runs queued tasks on this instance. Each job is claimed by exactly one worker (pg-boss) and run
 * by the system acting for the organisation that owns the task.
 */
export async function registerTaskWorker(deps: Deps): Promise<void> {
  await deps.jobs.work(
    TASK_QUEUE,
    async (job) => {
      const taskId = job.data.taskId;
      if (typeof taskId !== "string") throw new Error("task job without a taskId");
      const [task] = await deps.db
        .select({ organizationId: tasks.organizationId })
        .from(tasks)
        .where(eq(tasks.id, taskId));
      if (!task) return;
      const ctx = systemContext(deps, { name: "task", id: taskId, organizationId: task.organizationId });
      await runTask({ ctx, input: { taskId } });
    },
    { concurrency: 2 },
  );
}
