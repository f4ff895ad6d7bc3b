import { generateText, hasToolCall, stepCountIs, type Tool, tool } from "ai";
import { and, eq, inArray, isNull } from "drizzle-orm";
import { z } from "zod";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { type TaskUsage, type TranscriptEntry, tasks } from "../../platform/db/schema/tasks.ts";
import { RunTakenOver } from "./run-taken-over.ts";
import { SessionPool } from "./session-pool.ts";
import {
  type CommitStep,
  recordStep,
  settle,
  storedOutcome,
  storeStep,
  type TaskOutcome,
} from "./task-progress.ts";
import { ownTools, snapshotTools } from "./task-tools.ts";
import { committedFinish, transcriptMessages } from "./transcript-messages.ts";

const SYSTEM = [
  "You are patchbay's task agent. You investigate production problems for the organisation that owns this task.",
  "The customer tools you have were approved by the organisation for read use; call them only to gather information.",
  "A tool result with `outcome` other than `ok` explains what happened; never assume an ambiguous call failed or succeeded.",
  "When you are done, call `finish` with a short summary of what you found.",
].join("\n");

const finish = tool({
  description: "End the task with a summary of what you found or did.",
  inputSchema: z.object({ summary: z.string().min(1).max(8_000) }),
  execute: async () => ({ ok: true }),
});

/** What the caller of a run adds to it (a remediation: its tools, prompt and fencing). */
export type TaskRunOptions = {
  system?: string;
  /** Run beside the snapshot's tools; a `finish` here replaces the runtime's own. */
  tools?: Record<string, Tool>;
  /** Continue after the last committed step instead of ending `interrupted` (needs a fencing `commitStep`). */
  resume?: boolean;
  /** Aborted when this worker no longer holds the run: it stops and writes nothing more. */
  signal?: AbortSignal;
  /**
   * Runs in the transaction that stores a step; true when the caller was asked to cancel.
   * Throwing `RunTakenOver` ends the run with that step not stored.
   */
  commitStep?: CommitStep;
};

/**
 * Runs one task to a terminal status: the AI SDK loop over the task's frozen snapshot tools and
 * the runtime's own, every call in the call record, within the task's budgets (counted across
 * resumes), storing the transcript after each step. Safe to call again for a re-delivered job: a
 * task no longer queued or running is left alone (undefined; with `resume`, its stored outcome),
 * and one already running ends `interrupted` unless it resumes. Undefined also when the run was
 * taken over, or the task is not the caller's organisation's.
 */
export async function runTask(args: {
  ctx: ServiceContext;
  input: { taskId: string };
  options?: TaskRunOptions;
}): Promise<TaskOutcome | undefined> {
  requirePermission(args.ctx, "tasks:manage");
  const { deps } = args.ctx;
  const { taskId } = args.input;
  const opts = args.options ?? {};
  const [task] = await deps.db
    .select()
    .from(tasks)
    .where(and(eq(tasks.id, taskId), eq(tasks.organizationId, args.ctx.actor.organizationId)))
    .limit(1);
  if (!task) return undefined;
  if (task.status !== "queued" && task.status !== "running") {
    return opts.resume ? storedOutcome(task) : undefined;
  }
  if (task.cancelRequestedAt) return settle(deps, taskId, { status: "cancelled" });
  if (task.status === "running" && !opts.resume) {
    // A second delivery of a task that already started: its worker died mid-run. Running the
    // loop again could repeat remote calls, so it ends here; the call record shows what ran.
    return settle(deps, taskId, {
      status: "failed",
      errorCode: "interrupted",
      errorMessage:
        "The worker running this task stopped before it finished; its tool calls are in the call record. Start a new task.",
    });
  }
  // A worker that died after the agent's last step but before the task settled.
  const finished = committedFinish(task.transcript);
  if (finished !== undefined) return settle(deps, taskId, { status: "succeeded", summary: finished });
  const model = deps.languageModel;
  if (!model) {
    return settle(deps, taskId, {
      status: "failed",
      errorCode: "model_not_configured",
      errorMessage: "No model is configured (PATCHBAY_MODEL); nothing was done.",
    });
  }
  const { budgets } = task;
  const startedAt = task.startedAt ?? deps.clock();
  const remainingSteps = budgets.maxSteps - task.usage.steps;
  const remainingMs = budgets.maxDurationMs - (Date.now() - startedAt.getTime());
  if (remainingSteps <= 0 || remainingMs <= 0) {
    return settle(
      deps,
      taskId,
      budgetExhausted("The step or time budget was used up before the agent finished."),
    );
  }
  const [marked] = await deps.db
    .update(tasks)
    .set({ status: "running", startedAt })
    .where(
      and(
        eq(tasks.id, taskId),
        inArray(tasks.status, ["queued", "running"]),
        isNull(tasks.cancelRequestedAt),
      ),
    )
    .returning({ id: tasks.id });
  // Cancelled or settled since it was read: decided again from the row as it is now.
  if (!marked) return runTask(args);

  const sessions = new SessionPool(deps);
  const transcript: TranscriptEntry[] =
    task.transcript.length > 0 ? [...task.transcript] : [{ type: "user", text: task.instructions }];
  const usage: TaskUsage = { ...task.usage };
  // The call record is final before the status changes: a finished task's calls never change.
  const end = async (outcome: TaskOutcome | "lost") => {
    await sessions.settle();
    return outcome === "lost" ? undefined : settle(deps, taskId, outcome, { transcript, usage });
  };
  const abort = new AbortController();
  let stopReason: TaskOutcome | "lost" | undefined;
  const stop = (reason: TaskOutcome | "lost") => {
    stopReason ??= reason;
    abort.abort();
  };
  const lost = () => stop("lost");
  opts.signal?.addEventListener("abort", lost);
  const timer = setTimeout(
    () => stop(budgetExhausted(`Time budget of ${budgets.maxDurationMs} ms exhausted.`)),
    remainingMs,
  );

  try {
    const result = await generateText({
      model,
      system: opts.system ?? SYSTEM,
      messages: transcriptMessages(transcript),
      tools: {
        ...snapshotTools(deps, task, sessions, writeApprovals(task, startedAt)),
        ...ownTools(deps, task, sessions, { finish, ...opts.tools }),
      },
      stopWhen: [stepCountIs(remainingSteps), hasToolCall("finish")],
      abortSignal: abort.signal,
      onStepFinish: async (step) => {
        recordStep(step, transcript, usage);
        // The step's call records are final before its transcript is stored.
        await sessions.settle();
        try {
          if (await storeStep(deps, taskId, { transcript, usage }, opts.commitStep, step)) {
            stop({ status: "cancelled" });
          }
        } catch (error) {
          if (error instanceof RunTakenOver) return stop("lost");
          throw error;
        }
        const used = usage.inputTokens + usage.outputTokens;
        if (used > budgets.maxTokens) {
          stop(budgetExhausted(`Token budget of ${budgets.maxTokens} exhausted (${used} used).`));
        }
      },
    });
    if (stopReason) return await end(stopReason);
    const summary = committedFinish(transcript);
    if (summary !== undefined) return await end({ status: "succeeded", summary });
    if (result.steps.at(-1)?.toolCalls.length) {
      return await end(
        budgetExhausted(`Step budget of ${budgets.maxSteps} exhausted before the agent finished.`),
      );
    }
    return await end({ status: "succeeded", summary: result.text || "The agent stopped without a summary." });
  } catch (error) {
    if (stopReason) return end(stopReason);
    if (error instanceof RunTakenOver) return end("lost");
    deps.logger.warn({ err: error, taskId, kind: task.kind }, `${task.kind} model call failed`);
    return end({
      status: "failed",
      errorCode: "model_error",
      errorMessage: "The model provider failed; see the service log for details.",
    });
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", lost);
    await sessions.closeAll();
  }
}

const budgetExhausted = (errorMessage: string): TaskOutcome => ({
  status: "failed",
  errorCode: "budget_exhausted",
  errorMessage,
});

/**
 * Who decides on the task's `write` calls: the organisation's owners and admins, for a task a
 * member started, until the task's time budget ends. A remediation run has nobody in reach (it
 * runs on its own, often for an agent that paid for it): its `write` calls are refused.
 */
const writeApprovals = (task: typeof tasks.$inferSelect, startedAt: Date) =>
  task.kind === "agent"
    ? { deadline: new Date(startedAt.getTime() + task.budgets.maxDurationMs) }
    : undefined;
