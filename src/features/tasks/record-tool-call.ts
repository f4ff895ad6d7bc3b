import { sql } from "drizzle-orm";
import { type Db, perDatabase } from "../../platform/db/client.ts";
import { type ToolCallOutcome, taskToolCalls } from "../../platform/db/schema/tasks.ts";

type Entry = {
  taskId: string;
  modelToolName: string;
  connectionId: string | null;
  connectionRevision: number | null;
  toolName: string;
  startedAt: Date;
  durationMs: number;
  outcome: ToolCallOutcome;
  errorCode: string | null;
};

const buildInsert = (db: Db) =>
  db
    .insert(taskToolCalls)
    .values({
      taskId: sql.placeholder("taskId"),
      modelToolName: sql.placeholder("modelToolName"),
      connectionId: sql.placeholder("connectionId"),
      connectionRevision: sql.placeholder("connectionRevision"),
      toolName: sql.placeholder("toolName"),
      startedAt: sql.placeholder("startedAt"),
      durationMs: sql.placeholder("durationMs"),
      outcome: sql.placeholder("outcome"),
      errorCode: sql.placeholder("errorCode"),
    })
    .returning({ id: taskToolCalls.id })
    .prepare("record_tool_call");

/** One prepared statement per database handle: a record is written for every call. */
const inserts = perDatabase(buildInsert);

/**
 * One row of the call record, committed before the call's result returns to the model (or, for
 * an attempt written `ambiguous`, before the call runs). Returns the row's id.
 */
export async function recordToolCall(db: Db, entry: Entry): Promise<number> {
  const insert = inserts(db);
  const [row] = await insert.execute(entry);
  if (!row) throw new Error("insert returned no row");
  return row.id;
}
