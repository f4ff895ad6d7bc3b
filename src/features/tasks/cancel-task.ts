import { eq } from "drizzle-orm";
import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";
import { findTask, toTask } from "./read-tasks.ts";
import type { Task } from "./schemas.ts";

/**
 * Cancels a task. A queued task is cancelled at once; a running one is asked to stop and the
 * runtime ends it after the step in progress (a remote call already sent is not taken back).
 */
export async function cancelTask(args: {
  ctx: ServiceContext;
  input: { environmentId: string; taskId: string };
}): Promise<Task> {
  const { ctx } = args;
  requireOwnerOrAdmin(ctx, "tasks:manage");
  return withTransaction(ctx, async (tx) => {
    const row = await findTask(tx, ctx, args.input, { forUpdate: true });
    if (row.status !== "queued" && row.status !== "running") {
      throw new AppError("task_not_cancellable", `The task has already ${row.status}.`, {
        taskStatus: row.status,
      });
    }
    const now = ctx.deps.clock();
    const [next] = await tx
      .update(tasks)
      .set(
        row.status === "queued"
          ? { status: "cancelled", cancelRequestedAt: now, finishedAt: now }
          : { cancelRequestedAt: now },
      )
      .where(eq(tasks.id, row.id))
      .returning();
    if (!next) throw new Error("locked task vanished");
    await recordAudit(tx, ctx, {
      action: "task.cancel_requested",
      targetType: "task",
      targetId: row.id,
      environmentId: row.environmentId,
      details: { status: row.status },
    });
    return toTask(next);
  });
}
