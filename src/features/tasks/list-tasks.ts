import { and, asc, eq } from "drizzle-orm";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { afterCursor, decodeCursor, toPage } from "../../platform/db/pagination.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";
import { findEnvironment } from "../environments/find-environment.ts";
import type { Task } from "./schemas.ts";
import { toTask } from "./to-task.ts";

export async function listTasks(args: {
  ctx: ServiceContext;
  input: { environmentId: string; pageSize: number; cursor?: string | undefined };
}): Promise<{ items: Task[]; nextCursor: string | null }> {
  requirePermission(args.ctx, "tasks:read");
  const db = args.ctx.deps.db;
  await findEnvironment(db, args.ctx, args.input.environmentId);
  const rows = await db
    .select()
    .from(tasks)
    .where(
      and(
        eq(tasks.environmentId, args.input.environmentId),
        eq(tasks.organizationId, args.ctx.actor.organizationId),
        afterCursor(tasks.createdAt, tasks.id, decodeCursor(args.input.cursor)),
      ),
    )
    .orderBy(asc(tasks.createdAt), asc(tasks.id))
    .limit(args.input.pageSize + 1);
  return toPage(rows, args.input.pageSize, toTask);
}
