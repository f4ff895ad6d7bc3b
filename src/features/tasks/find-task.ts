import { and, eq } from "drizzle-orm";
import type { ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";
import { findEnvironment } from "../environments/find-environment.ts";

/** Tenancy gate for a task: the caller's organisation and exactly that environment, else 404. */
export async function findTask(
  db: Db,
  ctx: ServiceContext,
  ref: { environmentId: string; taskId: string },
  opts: { forUpdate?: boolean } = {},
) {
  await findEnvironment(db, ctx, ref.environmentId);
  const query = db
    .select()
    .from(tasks)
    .where(
      and(
        eq(tasks.id, ref.taskId),
        eq(tasks.environmentId, ref.environmentId),
        eq(tasks.organizationId, ctx.actor.organizationId),
      ),
    )
    .limit(1);
  const [row] = opts.forUpdate ? await query.for("update") : await query;
  if (!row) throw new AppError("not_found", `Task ${ref.taskId} was not found in this environment.`);
  return row;
}
