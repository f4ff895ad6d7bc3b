import { asc, eq } from "drizzle-orm";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { taskToolCalls } from "../../platform/db/schema/tasks.ts";
import { findTask } from "./find-task.ts";

/** The task's call record, in call order. Bounded by the task's step budget. */
export async function listToolCalls(args: {
  ctx: ServiceContext;
  input: { environmentId: string; taskId: string };
}) {
  requirePermission(args.ctx, "tasks:read");
  const task = await findTask(args.ctx.deps.db, args.ctx, args.input);
  const rows = await args.ctx.deps.db
    .select()
    .from(taskToolCalls)
    .where(eq(taskToolCalls.taskId, task.id))
    .orderBy(asc(taskToolCalls.id));
  return { items: rows.map((r) => ({ ...r, startedAt: r.startedAt.toISOString() })) };
}
