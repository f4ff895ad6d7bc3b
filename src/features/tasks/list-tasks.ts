import { and, eq } from "drizzle-orm";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { readPage } from "../../platform/db/pagination.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";
import { findEnvironment } from "../environments/find-environment.ts";
import type { Task } from "./schemas.ts";
import { toTask } from "./to-task.ts";

export async function listTasks(args: {
  ctx: ServiceContext;
  input: { environmentId: string; pageSize: number; cursor?: string | undefined };
}): Promise<{ items: Task[]; nextCursor: string | null }> {
  requirePermission(args.ctx, "tasks:read");
  const { ctx, input } = args;
  await findEnvironment(ctx.deps.db, ctx, input.environmentId);
  const scope = and(
    eq(tasks.environmentId, input.environmentId),
    eq(tasks.organizationId, ctx.actor.organizationId),
  );
  return readPage(ctx.deps.db, tasks, scope, input, toTask);
}
