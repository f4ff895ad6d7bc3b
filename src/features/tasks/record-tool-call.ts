import type { Db } from "../../db/client.ts";
import { type ToolCallOutcome, taskToolCalls } from "../../db/schema/tasks.ts";

/** One row of the call record. Arguments and results are not stored here (the transcript has them). */
export async function recordToolCall(
  db: Db,
  entry: {
    taskId: string;
    modelToolName: string;
    connectionId: string | null;
    connectionRevision: number | null;
    toolName: string;
    startedAt: Date;
    durationMs: number;
    outcome: ToolCallOutcome;
    errorCode: string | null;
  },
): Promise<void> {
  await db.insert(taskToolCalls).values(entry);
}
