import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { type ToolCallOutcome, taskToolCalls } from "../../db/schema/tasks.ts";

const buildUpdate = (db: Db) =>
  db
    .update(taskToolCalls)
    // `set` takes SQL rather than bare placeholders.
    .set({
      outcome: sql`${sql.placeholder("outcome")}`,
      errorCode: sql`${sql.placeholder("errorCode")}`,
      durationMs: sql`${sql.placeholder("durationMs")}`,
    })
    .where(eq(taskToolCalls.id, sql.placeholder("id")))
    .prepare("finish_tool_call");

const updates = new WeakMap<Db, ReturnType<typeof buildUpdate>>();

/**
 * Finishes an attempt's call record (`openAttempt`) with what came back. Until this commits
 * the row says `ambiguous`, which is also what it keeps if the worker stops first.
 */
export async function finishToolCall(
  db: Db,
  entry: {
    id: number;
    outcome: Exclude<ToolCallOutcome, "refused">;
    errorCode: string | null;
    durationMs: number;
  },
): Promise<void> {
  let update = updates.get(db);
  if (!update) {
    update = buildUpdate(db);
    updates.set(db, update);
  }
  await update.execute(entry);
}
