import { eq } from "drizzle-orm";
import { systemContext } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";
import { runTask } from "./run-task.ts";
import { TASK_QUEUE } from "./task-queue.ts";

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
