import type { StepResult, ToolSet } from "ai";
import { and, eq, inArray } from "drizzle-orm";
import { withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import type { Db } from "../../platform/db/client.ts";
import { type TaskUsage, type TranscriptEntry, tasks } from "../../platform/db/schema/tasks.ts";

/** How a run of a task ended, whatever its kind: what the task stores as its terminal status. */
export type TaskOutcome =
  | { status: "succeeded"; summary: string }
  | { status: "failed"; errorCode: string; errorMessage: string }
  | { status: "cancelled" };

/** A caller's part of a step's commit (see `TaskRunOptions.commitStep`). */
export type CommitStep = (tx: Db, step: StepResult<ToolSet>) => Promise<boolean>;

/**
 * Stores a step's transcript and usage, with the caller's commit in the same transaction.
 * True when the task or the caller was asked to cancel.
 */
export async function storeStep(
  deps: Deps,
  taskId: string,
  progress: { transcript: TranscriptEntry[]; usage: TaskUsage },
  commit: CommitStep | undefined,
  step: StepResult<ToolSet>,
): Promise<boolean> {
  const store = async (db: Db) => {
    const [row] = await db
      .update(tasks)
      .set(progress)
      .where(eq(tasks.id, taskId))
      .returning({ cancelRequestedAt: tasks.cancelRequestedAt });
    return row?.cancelRequestedAt != null;
  };
  if (!commit) return store(deps.db);
  return withTransaction(deps.db, async (tx) => {
    const asked = await commit(tx, step);
    return (await store(tx)) || asked;
  });
}

/** The outcome a settled task stored, for a resumed caller that has yet to act on it. */
export function storedOutcome(task: typeof tasks.$inferSelect): TaskOutcome {
  if (task.status === "succeeded") return { status: "succeeded", summary: task.summary ?? "" };
  if (task.status === "cancelled") return { status: "cancelled" };
  return { status: "failed", errorCode: task.errorCode ?? "internal", errorMessage: task.errorMessage ?? "" };
}

/** Adds one finished step's usage and messages to the task's running totals and transcript. */
export function recordStep(step: StepResult<ToolSet>, transcript: TranscriptEntry[], usage: TaskUsage): void {
  usage.steps += 1;
  usage.inputTokens += step.usage.inputTokens ?? 0;
  usage.outputTokens += step.usage.outputTokens ?? 0;
  if (step.text) transcript.push({ type: "assistant", text: step.text });
  for (const call of step.toolCalls) {
    transcript.push({ type: "tool_call", callId: call.toolCallId, tool: call.toolName, input: call.input });
  }
  for (const res of step.toolResults) {
    const output = res.output as { outcome?: string } | undefined;
    transcript.push({
      type: "tool_result",
      callId: res.toolCallId,
      tool: res.toolName,
      outcome: output?.outcome ?? "ok",
      output: res.output,
    });
  }
}

/** Writes the terminal status once; a task already terminal keeps its first outcome. */
export async function settle(
  deps: Deps,
  taskId: string,
  outcome: TaskOutcome,
  progress?: { transcript: TranscriptEntry[]; usage: TaskUsage },
): Promise<TaskOutcome> {
  await deps.db
    .update(tasks)
    .set({
      status: outcome.status,
      summary: outcome.status === "succeeded" ? outcome.summary : null,
      errorCode: outcome.status === "failed" ? outcome.errorCode : null,
      errorMessage: outcome.status === "failed" ? outcome.errorMessage : null,
      finishedAt: deps.clock(),
      ...(progress ?? {}),
    })
    .where(and(eq(tasks.id, taskId), inArray(tasks.status, ["queued", "running"])));
  return outcome;
}
