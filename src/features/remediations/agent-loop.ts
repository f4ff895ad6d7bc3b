import { generateText, hasToolCall, stepCountIs } from "ai";
import { eq } from "drizzle-orm";
import { withTransaction } from "../../context.ts";
import type { Db } from "../../db/client.ts";
import { type TaskUsage, type TranscriptEntry, tasks } from "../../db/schema/tasks.ts";
import type { Deps } from "../../deps.ts";
import type { Workspace } from "../sandbox/sandbox.ts";
import { recordStep, snapshotTools } from "../tasks/run-task.ts";
import { SessionPool } from "../tasks/session-pool.ts";
import { remediationTools } from "./agent-tools.ts";
import { systemPromptFor } from "./instructions.ts";
import type { RunGoal } from "./run-goal.ts";
import { type Claim, LostClaim, type RemediationRow, touchHeld, updateHeld } from "./run-state.ts";
import type { RemediationServices } from "./services.ts";
import { committedFinish, transcriptMessages } from "./transcript-messages.ts";

/** How the agent's loop ended. `lost`: another worker holds the run now; write nothing more. */
export type Ending =
  | { kind: "finished"; summary: string }
  | { kind: "cancelled" }
  | { kind: "failed"; code: string; reason: string }
  | { kind: "lost" };

/**
 * The AI SDK loop of a remediation agent: built-in tools plus the task's frozen customer tools,
 * within the run's step, token and time budgets (counted across resumes). Each model step is
 * committed — transcript, usage and a progress event — under the claim before the next begins.
 */
export async function runAgentLoop(args: {
  deps: Deps;
  services: RemediationServices;
  run: RemediationRow;
  claim: Claim;
  signal: AbortSignal;
  task: typeof tasks.$inferSelect;
  goal: RunGoal;
  workspace: Workspace;
  testCommand: string;
  scope: { organizationId: string; environmentId: string };
}): Promise<Ending> {
  const { deps, claim, task, run } = args;
  const model = deps.languageModel;
  if (!model) return { kind: "failed", code: "model_not_configured", reason: "No model is configured." };
  const finished = committedFinish(task.transcript);
  if (finished !== undefined) return { kind: "finished", summary: finished };
  const transcript: TranscriptEntry[] = [...task.transcript];
  const usage: TaskUsage = { ...task.usage };
  const budgets = run.budgets;
  const startedAt = task.startedAt ?? deps.clock();
  const remainingSteps = budgets.maxSteps - usage.steps;
  const remainingMs = budgets.maxDurationMs - (Date.now() - startedAt.getTime());
  if (remainingSteps <= 0 || remainingMs <= 0) {
    return {
      kind: "failed",
      code: "budget_exhausted",
      reason: "The step or time budget was used up before the agent finished.",
    };
  }
  await deps.db.update(tasks).set({ status: "running", startedAt }).where(eq(tasks.id, task.id));

  const abort = new AbortController();
  let ending: Ending | undefined;
  const stop = (e: Ending) => {
    ending ??= e;
    abort.abort();
  };
  const onJobAbort = () => stop({ kind: "lost" });
  args.signal.addEventListener("abort", onJobAbort);
  const timer = setTimeout(
    () =>
      stop({
        kind: "failed",
        code: "budget_exhausted",
        reason: `Time budget of ${budgets.maxDurationMs} ms exhausted.`,
      }),
    remainingMs,
  );
  let summary: string | undefined;
  let coding = run.status === "coding";
  const sessions = new SessionPool(deps);
  const tools = {
    ...snapshotTools(deps, task, sessions),
    ...remediationTools({
      evidence: args.services.evidence,
      scope: args.scope,
      goal: args.goal,
      workspace: args.workspace,
      testCommand: args.testCommand,
      onFinish: (s) => {
        summary = s;
      },
      onWrite: async (path) => {
        if (coding) return;
        coding = true;
        await updateHeld(
          deps,
          claim,
          { status: "coding" },
          {
            type: "status",
            status: "coding",
            message: `Writing the change (first file: ${path}).`,
          },
        );
      },
    }),
  };
  try {
    const result = await generateText({
      model,
      system: systemPromptFor(args.goal),
      messages: transcriptMessages(
        transcript.length > 0 ? transcript : [{ type: "user", text: task.instructions }],
      ),
      tools,
      stopWhen: [stepCountIs(remainingSteps), hasToolCall("finish")],
      abortSignal: abort.signal,
      onStepFinish: async (step) => {
        if (transcript.length === 0) transcript.push({ type: "user", text: task.instructions });
        recordStep(step, transcript, usage);
        // The step's call records are final before its transcript is committed.
        await sessions.settle();
        try {
          const current = await commitStep(
            deps,
            claim,
            task.id,
            transcript,
            usage,
            describeStep(step.toolCalls),
          );
          if (current.cancelRequestedAt) stop({ kind: "cancelled" });
        } catch (error) {
          if (error instanceof LostClaim) return stop({ kind: "lost" });
          throw error;
        }
        const used = usage.inputTokens + usage.outputTokens;
        if (used > budgets.maxTokens) {
          stop({
            kind: "failed",
            code: "budget_exhausted",
            reason: `Token budget of ${budgets.maxTokens} exhausted (${used} used).`,
          });
        }
      },
    });
    if (ending) return ending;
    if (summary !== undefined) return { kind: "finished", summary };
    if (result.steps.at(-1)?.toolCalls.length) {
      return {
        kind: "failed",
        code: "budget_exhausted",
        reason: `Step budget of ${budgets.maxSteps} exhausted before the agent finished.`,
      };
    }
    return { kind: "finished", summary: result.text || "The agent stopped without a summary." };
  } catch (error) {
    if (ending) return ending;
    if (error instanceof LostClaim) return { kind: "lost" };
    deps.logger.warn({ err: error, remediationId: run.id }, "remediation model call failed");
    return {
      kind: "failed",
      code: "model_error",
      reason: "The model provider failed; see the service log for details.",
    };
  } finally {
    clearTimeout(timer);
    args.signal.removeEventListener("abort", onJobAbort);
    await sessions.closeAll();
  }
}

/** One committed step: transcript and usage with a progress event, only while the claim holds. */
async function commitStep(
  deps: Deps,
  claim: Claim,
  taskId: string,
  transcript: TranscriptEntry[],
  usage: TaskUsage,
  message: string,
): Promise<RemediationRow> {
  return withTransaction(deps.db, async (tx) => {
    const row = await touchHeld(tx, deps, claim, { type: "agent_step", message });
    await tx.update(tasks).set({ transcript, usage }).where(eq(tasks.id, taskId));
    return row;
  });
}

function describeStep(calls: readonly { toolName: string; input: unknown }[]): string {
  if (calls.length === 0) return "The agent answered without calling a tool.";
  return calls
    .map((c) => {
      const input = c.input as Record<string, unknown> | undefined;
      const arg = input?.path ?? input?.query ?? input?.traceId;
      return typeof arg === "string" ? `${c.toolName} ${arg}` : c.toolName;
    })
    .join("; ");
}

export async function settleTask(db: Db, taskId: string, ending: Ending, now: Date): Promise<void> {
  await db
    .update(tasks)
    .set(
      ending.kind === "finished"
        ? { status: "succeeded", summary: ending.summary, finishedAt: now }
        : ending.kind === "cancelled"
          ? { status: "cancelled", finishedAt: now }
          : ending.kind === "failed"
            ? { status: "failed", errorCode: ending.code, errorMessage: ending.reason, finishedAt: now }
            : {},
    )
    .where(eq(tasks.id, taskId));
}
