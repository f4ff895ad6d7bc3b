import { sql } from "drizzle-orm";
import { type Db, perDatabase } from "../../platform/db/client.ts";
import { type ToolCallOutcome, taskToolCalls } from "../../platform/db/schema/tasks.ts";

export type FinishedCall = {
  id: number;
  outcome: Exclude<ToolCallOutcome, "refused">;
  errorCode: string | null;
  durationMs: number;
};

const p = (name: string) => sql.placeholder(name);

// One statement for any number of rows (arrays, unnested), so it is prepared once.
const buildUpdate = (db: Db) =>
  db
    .update(taskToolCalls)
    .set({ outcome: sql`v.outcome`, errorCode: sql`v.error_code`, durationMs: sql`v.duration_ms` })
    .from(
      sql`unnest(${p("ids")}::bigint[], ${p("outcomes")}::text[], ${p("errorCodes")}::text[], ${p("durations")}::integer[]) as v(id, outcome, error_code, duration_ms)`,
    )
    .where(sql`${taskToolCalls.id} = v.id`)
    .prepare("finish_tool_calls");

const updates = perDatabase(buildUpdate);

/**
 * Finishes attempts' call records (`openAttempt`) with what came back, in one statement. Until
 * this commits a row says `ambiguous`, which is also what it keeps if the worker stops first.
 */
export async function finishToolCalls(db: Db, calls: FinishedCall[]): Promise<void> {
  if (calls.length === 0) return;
  const update = updates(db);
  await update.execute({
    ids: calls.map((c) => c.id),
    outcomes: calls.map((c) => c.outcome),
    errorCodes: calls.map((c) => c.errorCode),
    durations: calls.map((c) => c.durationMs),
  });
}
