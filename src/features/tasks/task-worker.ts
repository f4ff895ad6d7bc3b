import type { Deps } from "../../deps.ts";
import { runTask } from "./run-task.ts";
import { TASK_QUEUE } from "./task-queue.ts";

/** Runs queued tasks on this instance. Each job is claimed by exactly one worker (pg-boss). */
export async function registerTaskWorker(deps: Deps): Promise<void> {
  await deps.jobs.work(
    TASK_QUEUE,
    async (job) => {
      const taskId = job.data.taskId;
      if (typeof taskId !== "string") throw new Error("task job without a taskId");
      await runTask(deps, taskId);
    },
    { concurrency: 2 },
  );
}
