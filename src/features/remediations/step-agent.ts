import { eq } from "drizzle-orm";
import { type ServiceContext, withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { newId } from "../../ids.ts";
import type { ReproductionClaim } from "../../platform/db/schema/remediations.ts";
import { type RemediationChange, remediations } from "../../platform/db/schema/remediations.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";
import type { Workspace } from "../../platform/sandbox/sandbox.ts";
import { checkRelativePath } from "../../platform/sandbox/workspace-paths.ts";
import type { RepositoryRow } from "../repositories/index.ts";
import { BUILTIN_TOOL_NAMES, committedWrites, runTask, takeSnapshot } from "../tasks/index.ts";
import { remediationTools } from "./agent-tools.ts";
import { checkOnBase } from "./reproduction.ts";
import { assessRisk } from "./risk.ts";
import { goalMissing, goalPrompt, type RunGoal, runGoal, systemPromptFor } from "./run-goal.ts";
import {
  advance,
  CANCELLED,
  type Claim,
  failRun,
  type RemediationRow,
  touchHeld,
  updateHeld,
} from "./run-state.ts";
import { hostFor, type RemediationServices, runRepository } from "./services.ts";

/**
 * `investigating` and `coding`: the agent's task (task runtime, kind `remediation`) with the
 * run's built-in tools in a working copy of the base commit. Every model step is committed with
 * its tool results (the task transcript) and a progress event under the run's claim, so a worker
 * that takes the run over rebuilds the conversation and the files written so far and continues
 * after the last committed step. It ends with a proposed change (→ `validating`, or
 * `awaiting-approval` when risky), or a reason to fail.
 */
export async function agentStep(args: {
  ctx: ServiceContext;
  services: RemediationServices;
  run: RemediationRow;
  claim: Claim;
  signal: AbortSignal;
}): Promise<void> {
  const { ctx, services, claim, run } = args;
  const { deps } = ctx;
  const fail = (code: string, reason: string) => failRun(deps, claim, code, reason, { code });
  if (!deps.languageModel) {
    return void (await fail("model_not_configured", "No model is configured (PATCHBAY_MODEL)."));
  }
  const repo = await runRepository(deps.db, run);
  if (!repo || !run.baseCommit) {
    return void (await fail(
      "repository_unavailable",
      "The repository registration was removed during the run.",
    ));
  }
  const goal = await runGoal(services, run);
  if (!goal) {
    const missing = goalMissing(run);
    return void (await fail(missing.code, missing.reason));
  }

  const task = await ensureAgentTask({ deps, claim, run, goal, repo });
  const baseCommit = run.baseCommit;
  const workspace = await services.sandbox.createWorkspace(
    await hostFor(services, repo).archive(repo, run.baseCommit),
  );
  try {
    // A resumed run replays the agent's committed writes onto the fresh working copy.
    for (const write of committedWrites(task.transcript))
      await workspace.writeFile(write.path, write.content);
    let coding = run.status === "coding";
    const outcome = await runTask({
      ctx,
      input: { taskId: task.id },
      options: {
        system: systemPromptFor(goal),
        tools: remediationTools({
          evidence: services.evidence,
          scope: { organizationId: run.organizationId, environmentId: run.environmentId },
          goal,
          workspace,
          testCommand: repo.testCommand,
          checkReproduction: async (claimed) =>
            checkOnBase({
              services,
              repo,
              baseCommit,
              claim: claimed,
              testFiles: await filesOf(workspace, claimed.tests),
              problem: goal.kind === "fix" ? goal.problem : {},
            }),
          onWrite: async (path) => {
            if (coding) return;
            coding = true;
            const message = `Writing the change (first file: ${path}).`;
            await updateHeld(
              deps,
              claim,
              { status: "coding" },
              { type: "status", status: "coding", message },
            );
          },
        }),
        resume: true,
        signal: args.signal,
        commitStep: async (tx, step) => {
          const event = { type: "agent_step", message: describeStep(step.toolCalls) };
          return (await touchHeld(tx, deps, claim, event)).cancelRequestedAt != null;
        },
      },
    });
    // Undefined: another worker holds the run now.
    if (!outcome) return;
    if (outcome.status === "cancelled") return void (await advance(deps, claim, "cancelled", {}, CANCELLED));
    if (outcome.status === "failed") return void (await fail(outcome.errorCode, outcome.errorMessage));
    const proposal = await workspace.proposedChange();
    if (proposal.files.length === 0) {
      return void (await fail(
        "no_change",
        `The agent finished without changing any file: ${outcome.summary}`,
      ));
    }
    const risk = assessRisk(proposal.files, proposal.diff, (path) => !proposal.created.includes(path));
    const finished = await finishInput(deps, task.id);
    const change: RemediationChange = {
      summary: outcome.summary,
      files: proposal.files,
      diff: proposal.diff,
      risk,
      ...(finished.reproduction ? { reproduction: finished.reproduction } : {}),
      ...(finished.noReproductionReason ? { noReproductionReason: finished.noReproductionReason } : {}),
    };
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
        message: `Proposed a change to ${paths.join(", ")}: ${outcome.summary}`.slice(0, 2_000),
        data: { files: paths },
      },
    );
  } finally {
    await workspace.dispose();
  }
}

/** The contents of `paths` in the agent's working copy (null: not there, or unreadable). */
async function filesOf(workspace: Workspace, paths: string[]): Promise<Map<string, string | null>> {
  const files = new Map<string, string | null>();
  for (const path of paths) {
    const key = checkRelativePath(path);
    files.set(key, await workspace.readFile(key).catch(() => null));
  }
  return files;
}

/** What the agent's committed `finish` call named: its reproduction, or why it has none. */
async function finishInput(
  deps: Deps,
  taskId: string,
): Promise<{ reproduction?: ReproductionClaim; noReproductionReason?: string }> {
  const [row] = await deps.db
    .select({ transcript: tasks.transcript })
    .from(tasks)
    .where(eq(tasks.id, taskId));
  const call = row?.transcript.findLast((e) => e.type === "tool_call" && e.tool === "finish");
  if (call?.type !== "tool_call") return {};
  const input = call.input as { reproduction?: ReproductionClaim; noReproductionReason?: unknown };
  const tests = input.reproduction?.tests;
  return {
    ...(Array.isArray(tests) && tests.length > 0 && tests.every((t) => typeof t === "string")
      ? {
          reproduction: {
            tests,
            ...(typeof input.reproduction?.name === "string" ? { name: input.reproduction.name } : {}),
          },
        }
      : {}),
    ...(typeof input.noReproductionReason === "string"
      ? { noReproductionReason: input.noReproductionReason }
      : {}),
  };
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

/**
 * The run's agent task (kind `remediation`), created once under the claim together with the
 * run's reference to it: its snapshot of the environment's ready customer tools is frozen at
 * that moment (task rules 1–3), and a resumed run finds the same task and transcript.
 */
async function ensureAgentTask(args: {
  deps: Deps;
  claim: Claim;
  run: RemediationRow;
  goal: RunGoal;
  repo: RepositoryRow;
}): Promise<typeof tasks.$inferSelect> {
  const { deps, run } = args;
  if (run.taskId) {
    const [existing] = await deps.db.select().from(tasks).where(eq(tasks.id, run.taskId));
    if (existing) return existing;
  }
  return withTransaction(deps.db, async (tx) => {
    await touchHeld(tx, deps, args.claim);
    const now = deps.clock();
    const scope = { organizationId: run.organizationId, environmentId: run.environmentId };
    const snapshot = await takeSnapshot(tx, scope, { now, reservedNames: BUILTIN_TOOL_NAMES });
    const [task] = await tx
      .insert(tasks)
      .values({
        id: newId("tsk"),
        ...scope,
        kind: "remediation",
        instructions: goalPrompt(args.goal, args.repo.fullName ?? args.repo.path ?? args.repo.id),
        snapshot,
        budgets: run.budgets,
        usage: { steps: 0, inputTokens: 0, outputTokens: 0 },
        transcript: [],
        createdBy: run.requestedBy,
        createdAt: now,
      })
      .returning();
    if (!task) throw new Error("insert returned no row");
    await tx.update(remediations).set({ taskId: task.id }).where(eq(remediations.id, run.id));
    return task;
  });
}
