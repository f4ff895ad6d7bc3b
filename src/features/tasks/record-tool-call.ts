import { sql } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
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
    .prepare("record_tool_call");

/** One prepared statement per database handle: a record is written for every call. */
const inserts = perDatabase(buildInsert);

/**
 * One row of the call record, committed before the call's result returns to the model. Calls
 * that run are recorded by the gate's attempt instead (`openAttempt`, `openOwnAttempt`).
 */
export async function recordToolCall(db: Db, entry: Entry): Promise<void> {
  await inserts(db).execute(entry);
}

/**
 * A call that never reached its tool (refused, or failed before it was sent), recorded after the
 * decision: the answer to the model stands whether or not its row is written, so a failure is
 * logged, never thrown.
 */
export function recordUnsentCall(deps: Pick<Deps, "db" | "logger">, entry: Entry): Promise<void> {
  return recordToolCall(deps.db, entry).catch((err: unknown) => {
    deps.logger.warn(
      { err, taskId: entry.taskId, tool: entry.modelToolName },
      "a tool call that was not sent was not recorded",
    );
  });
}
