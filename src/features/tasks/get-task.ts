import { requirePermission, type ServiceContext } from "../../context.ts";
import { findTask } from "./find-task.ts";
import type { Task } from "./schemas.ts";
import { toTask } from "./to-task.ts";

export async function getTask(args: {
  ctx: ServiceContext;
  input: { environmentId: string; taskId: string };
}): Promise<Task> {
  requirePermission(args.ctx, "tasks:read");
  return toTask(await findTask(args.ctx.deps.db, args.ctx, args.input));
}

export async function getTaskTranscript(args: {
  ctx: ServiceContext;
  input: { environmentId: string; taskId: string };
}): Promise<{ taskId: string; entries: Record<string, unknown>[] }> {
  requirePermission(args.ctx, "tasks:read");
  const row = await findTask(args.ctx.deps.db, args.ctx, args.input);
  return { taskId: row.id, entries: row.transcript };
}
