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

/** One row of the call record; calls that run are recorded by the gate's attempt instead. */
export async function recordToolCall(db: Db, entry: Entry): Promise<void> {
  await inserts(db).execute(entry);
}

/**
 * A call that never reached its tool (refused, or failed before it was sent), recorded after the
 * decision: the answer to the model stands whether or not its row is written, so a failure is
 * logged, never thrown.
 */
export async function recordUnsentCall(deps: Pick<Deps, "db" | "logger">, entry: Entry): Promise<void> {
  try {
    await recordToolCall(deps.db, entry);
  } catch (err) {
    deps.logger.warn(
      { err, taskId: entry.taskId, tool: entry.modelToolName },
      "a tool call that was not sent was not recorded",
    );
  }
}

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
  await updates(db).execute({
    ids: calls.map((c) => c.id),
    outcomes: calls.map((c) => c.outcome),
    errorCodes: calls.map((c) => c.errorCode),
    durations: calls.map((c) => c.durationMs),
  });
}
