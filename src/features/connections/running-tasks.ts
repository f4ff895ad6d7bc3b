import { and, inArray, sql } from "drizzle-orm";
import type { Db } from "../../platform/db/client.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";

/**
 * Tasks not yet finished whose frozen snapshot includes the connection: deleting it makes their
 * next call to it fail closed (`connection_changed`).
 */
export async function countRunningTasks(db: Db, connectionId: string): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(tasks)
    .where(
      and(
        inArray(tasks.status, ["queued", "running"]),
        sql`${tasks.snapshot} -> 'connections' @> ${JSON.stringify([{ connectionId }])}::jsonb`,
      ),
    );
  return row?.count ?? 0;
}
