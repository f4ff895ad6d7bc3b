import type { Db } from "../../db/client.ts";

/**
 * Tasks whose snapshot includes the connection and that are still running. The task runtime
 * does not exist yet, so there are none; it will answer this from its own table.
 */
export async function countRunningTasks(_db: Db, _connectionId: string): Promise<number> {
  return 0;
}
