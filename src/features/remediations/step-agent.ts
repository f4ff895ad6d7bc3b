import { generateText, hasToolCall, stepCountIs } from "ai";
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { remediations } from "../../db/schema/remediations.ts";
import { repositories } from "../../db/schema/repositories.ts";
import { type TaskUsage, type TranscriptEntry, tasks } from "../../db/schema/tasks.ts";
import type { Deps } from "../../deps.ts";
import type { Workspace } from "../sandbox/sandbox.ts";
import { recordStep, snapshotTools } from "../tasks/run-task.ts";
import { SessionPool } from "../tasks/session-pool.ts";
import { ensureAgentTask } from "./agent-task.ts";
import { remediationTools } from "./agent-tools.ts";
import { hostFor } from "./host-for.ts";
import { REMEDIATION_SYSTEM } from "./instructions.ts";
import { assessRisk } from "./risk.ts";
import { advance, type Claim, LostClaim, type RemediationRow, touchHeld, updateHeld } from "./run-state.ts";
import type { RemediationServices } from "./services.ts";
import { committedWrites, transcriptMessages } from "./transcript-messages.ts";

type Ending =
  | { kind: "finished"; summary: string }
  | { kind: "cancelled" }
  | { kind: "failed"; code: string; reason: string }
  | { kind: "lost" };

/**
 * `investigating` and `coding`: the agent loop (a task of the task runtime, kind `remediation`)
 * in a working copy of the base commit. Every model step is committed with its tool results
 * (the task transcript) under the run's claim, so a worker that takes the run over rebuilds the
 * conversation and the files written so far and continues after the last committed step. The
 * loop ends with a proposed change (→ `validating`, or `awaiting-approval` when risky), or a
 * reason to fail.
 */
export async function agentStep(args: {
  deps: Deps;
  services: RemediationServices;
  run: RemediationRow;
  claim: Claim;
  signal: AbortSignal;
}): Promise<void> {
  const { deps, services, claim } = args;
  let run = args.run;
  const fail = (code: string, reason: string) =>
    advance(
      deps,
      claim,
      "failed",
      { reasonCode: code, reason },
      { type: "failed", message: reason, data: { code } },
    );
  const model = deps.languageModel;
  if (!model) return void (await fail("model_not_configured", "No model is configured (PATCHBAY_MODEL)."));
  const [repo] = run.repositoryId
    ? await deps.db.select().from(repositories).where(eq(repositories.id, run.repositoryId))
    : [];
  if (!repo || !run.baseCommit) {
    return void (await fail(
      "repository_unavailable",
      "The repository registration was removed during the run.",
    ));
  }
  const scope = { organizationId: run.organizationId, environmentId: run.environmentId };
  const problem = await services.evidence.getProblem(scope, run.problemId);
  if (!problem) return void (await fail("problem_not_found", `Problem ${run.problemId} no longer exists.`));

  const task = await ensureAgentTask({ deps, claim, run, problem, repo });
  const archive = await hostFor(services, repo).archive(repo, run.baseCommit);
  const workspace = await services.sandbox.createWorkspace(archive);
  try {
    for (const write of committedWrites(task.transcript))
      await workspace.writeFile(write.path, write.content);
    const ending = await loop({ ...args, task, workspace, testCommand: repo.testCommand, scope });
    run = (await deps.db.select().from(remediations).where(eq(remediations.id, run.id)))[0] ?? run;
    if (ending.kind === "lost") return;
    await settleTask(deps.db, task.id, ending, deps.clock());
    if (ending.kind === "cancelled") {
      await advance(deps, claim, "cancelled", {}, { type: "cancelled", message: "Cancelled on request." });
      return;
    }
    if (ending.kind === "failed") return void (await fail(ending.code, ending.reason));
    const proposal = await workspace.proposedChange();
    if (proposal.files.length === 0) {
      return void (await fail(
        "no_change",
        `The agent finished without changing any file: ${ending.summary}`,
      ));
    }
    const risk = assessRisk(proposal.files, proposal.diff, (path) => !proposal.created.includes(path));
    const change = { summary: ending.summary, files: proposal.files, diff: proposal.diff, risk };
    const paths = proposal.files.map((f) => f.path);
    if (risk.high) {
      const message = `The change needs a human's approval: ${risk.reasons.join("; ")}.`;
      await advance(
        deps,
        claim,
        "awaiting-approval",
        { change, approval: { kind: "high_risk_change", requestedAt: deps.clock().toISOString(), message } },
        { type: "approval_requested", message, data: { kind: "high_risk_change", files: paths } },
      );
      return;
    }
    await advance(
      deps,
      claim,
      "validating",
      { change },
      {
        type: "change_proposed",
        message: `Proposed a change to ${paths.join(", ")}: ${ending.summary}`.slice(0, 2_000),
        data: { files: paths },
      },
    );
  } finally {
    await workspace.dispose();
  }
}

async function loop(args: {
  deps: Deps;
  services: RemediationServices;
  run: RemediationRow;
  claim: Claim;
  signal: AbortSignal;
  task: typeof tasks.$inferSelect;
  workspace: Workspace;
  testCommand: string;
  scope: { organizationId: string; environmentId: string };
}): Promise<Ending> {
  const { deps, claim, task, run } = args;
  const model = deps.languageModel;
  if (!model) return { kind: "failed", code: "model_not_configured", reason: "No model is configured." };
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
      problemId: run.problemId,
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
            message: `Writing a fix (first file: ${path}).`,
          },
        );
      },
    }),
  };
  try {
    const result = await generateText({
      model,
      system: REMEDIATION_SYSTEM,
      messages: transcriptMessages(
        transcript.length > 0 ? transcript : [{ type: "user", text: task.instructions }],
      ),
      tools,
      stopWhen: [stepCountIs(remainingSteps), hasToolCall("finish")],
      abortSignal: abort.signal,
      onStepFinish: async (step) => {
        if (transcript.length === 0) transcript.push({ type: "user", text: task.instructions });
        recordStep(step, transcript, usage);
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
  return deps.db.transaction(async (raw) => {
    const tx = raw as unknown as Db;
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

async function settleTask(db: Db, taskId: string, ending: Ending, now: Date): Promise<void> {
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
