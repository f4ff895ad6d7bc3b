import {
  generateText,
  hasToolCall,
  jsonSchema,
  type LanguageModel,
  type StepResult,
  stepCountIs,
  type Tool,
  type ToolSet,
  tool,
} from "ai";
import { and, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { type TaskUsage, type TranscriptEntry, tasks } from "../../db/schema/tasks.ts";
import type { Deps } from "../../deps.ts";
import { callSnapshotTool } from "./call-snapshot-tool.ts";
import type { RunningTask } from "./gate.ts";
import { SessionPool } from "./session-pool.ts";

export type TaskOutcome =
  | { status: "succeeded"; summary: string }
  | { status: "failed"; errorCode: string; errorMessage: string }
  | { status: "cancelled" };

const SYSTEM = [
  "You are patchbay's task agent. You investigate production problems for the organisation that owns this task.",
  "The customer tools you have were approved by the organisation for read use; call them only to gather information.",
  "A tool result with `outcome` other than `ok` explains what happened; never assume an ambiguous call failed or succeeded.",
  "When you are done, call `finish` with a short summary of what you found.",
].join("\n");

type Extra = { tools?: Record<string, Tool>; system?: string };

/**
 * Runs one task to a terminal status: the AI SDK loop over the task's frozen snapshot tools plus
 * the runtime's built-ins, within its step, token and time budgets, storing the transcript after
 * each step. Safe to call again for the same task (a re-delivered job): a task that is no longer
 * queued or running is left alone.
 */
export async function runTask(
  deps: Deps,
  taskId: string,
  extra: Extra = {},
): Promise<TaskOutcome | undefined> {
  const [task] = await deps.db.select().from(tasks).where(eq(tasks.id, taskId)).limit(1);
  if (!task || (task.status !== "queued" && task.status !== "running")) return undefined;
  if (task.cancelRequestedAt) return settle(deps, taskId, { status: "cancelled" });
  if (task.status === "running") {
    // A second delivery of a task that already started: its worker died mid-run. Running the
    // loop again could repeat remote calls, so it ends here; the call record shows what ran.
    return settle(deps, taskId, {
      status: "failed",
      errorCode: "interrupted",
      errorMessage:
        "The worker running this task stopped before it finished; its tool calls are in the call record. Start a new task.",
    });
  }
  const model: LanguageModel | undefined = deps.languageModel;
  if (!model) {
    return settle(deps, taskId, {
      status: "failed",
      errorCode: "model_not_configured",
      errorMessage: "No model is configured (PATCHBAY_MODEL); nothing was done.",
    });
  }
  const startedAt = task.startedAt ?? deps.clock();
  await deps.db.update(tasks).set({ status: "running", startedAt }).where(eq(tasks.id, taskId));

  const sessions = new SessionPool(deps);
  const transcript: TranscriptEntry[] = [...task.transcript];
  if (transcript.length === 0) transcript.push({ type: "user", text: task.instructions });
  const usage: TaskUsage = { ...task.usage };
  // The call record is final before the status changes: a finished task's calls never change.
  const end = async (outcome: TaskOutcome) => {
    await sessions.settle();
    return settle(deps, taskId, outcome, { transcript, usage });
  };
  const abort = new AbortController();
  let stopReason: TaskOutcome | undefined;
  const stop = (outcome: TaskOutcome) => {
    stopReason ??= outcome;
    abort.abort();
  };
  const timer = setTimeout(
    () => stop(budgetExhausted(`Time budget of ${task.budgets.maxDurationMs} ms exhausted.`)),
    Math.max(0, task.budgets.maxDurationMs - (Date.now() - startedAt.getTime())),
  );
  let finishSummary: string | undefined;
  const finish = tool({
    description: "End the task with a summary of what you found or did.",
    inputSchema: z.object({ summary: z.string().min(1).max(8_000) }),
    execute: async ({ summary }) => {
      finishSummary = summary;
      return { ok: true };
    },
  });

  try {
    const result = await generateText({
      model,
      system: extra.system ?? SYSTEM,
      prompt: task.instructions,
      tools: { ...snapshotTools(deps, task, sessions), finish, ...extra.tools },
      stopWhen: [stepCountIs(task.budgets.maxSteps), hasToolCall("finish")],
      abortSignal: abort.signal,
      onStepFinish: async (step) => {
        recordStep(step, transcript, usage);
        // The step's call records are final before its transcript is stored.
        await sessions.settle();
        const [current] = await deps.db
          .update(tasks)
          .set({ transcript, usage })
          .where(eq(tasks.id, taskId))
          .returning({ cancelRequestedAt: tasks.cancelRequestedAt });
        if (current?.cancelRequestedAt) stop({ status: "cancelled" });
        const used = usage.inputTokens + usage.outputTokens;
        if (used > task.budgets.maxTokens) {
          stop(budgetExhausted(`Token budget of ${task.budgets.maxTokens} exhausted (${used} used).`));
        }
      },
    });
    if (stopReason) return await end(stopReason);
    if (finishSummary !== undefined) return await end({ status: "succeeded", summary: finishSummary });
    if (result.steps.at(-1)?.toolCalls.length) {
      return await end(
        budgetExhausted(`Step budget of ${task.budgets.maxSteps} exhausted before the agent finished.`),
      );
    }
    return await end({ status: "succeeded", summary: result.text });
  } catch (error) {
    if (stopReason) return end(stopReason);
    deps.logger.warn({ err: error, taskId }, "task model call failed");
    return end({
      status: "failed",
      errorCode: "model_error",
      errorMessage: "The model provider failed; see the service log for details.",
    });
  } finally {
    clearTimeout(timer);
    await sessions.closeAll();
  }
}

const budgetExhausted = (errorMessage: string): TaskOutcome => ({
  status: "failed",
  errorCode: "budget_exhausted",
  errorMessage,
});

/** The task's frozen tools, each routed through the per-call gate (`callSnapshotTool`). */
export function snapshotTools(deps: Deps, task: RunningTask, sessions: SessionPool): Record<string, Tool> {
  return Object.fromEntries(
    task.snapshot.tools.map((t) => [
      t.modelName,
      tool({
        description: [t.title, t.description].filter(Boolean).join(" — ") || t.toolName,
        inputSchema: jsonSchema(t.inputSchema),
        execute: async (input) =>
          callSnapshotTool({
            deps,
            task,
            tool: t,
            input: (input ?? {}) as Record<string, unknown>,
            sessions,
          }),
      }),
    ]),
  );
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
async function settle(
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
