import type { ServiceContext } from "../../context.ts";
import { runTask } from "../tasks/run-task.ts";
import { ensureAgentTask } from "./agent-task.ts";
import { remediationTools } from "./agent-tools.ts";
import { committedWrites } from "./committed-writes.ts";
import { hostFor, runRepository } from "./host-for.ts";
import { systemPromptFor } from "./instructions.ts";
import { assessRisk } from "./risk.ts";
import { goalMissing, runGoal } from "./run-goal.ts";
import { advance, type Claim, failRun, type RemediationRow, touchHeld, updateHeld } from "./run-state.ts";
import type { RemediationServices } from "./services.ts";

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
  const model = deps.languageModel;
  if (!model) return void (await fail("model_not_configured", "No model is configured (PATCHBAY_MODEL)."));
  const repo = await runRepository(deps.db, run);
  if (!repo || !run.baseCommit) {
    return void (await fail(
      "repository_unavailable",
      "The repository registration was removed during the run.",
    ));
  }
  const scope = { organizationId: run.organizationId, environmentId: run.environmentId };
  const goal = await runGoal(services, run);
  if (!goal) {
    const missing = goalMissing(run);
    return void (await fail(missing.code, missing.reason));
  }

  const task = await ensureAgentTask({ deps, claim, run, goal, repo });
  const archive = await hostFor(services, repo).archive(repo, run.baseCommit);
  const workspace = await services.sandbox.createWorkspace(archive);
  try {
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
          scope,
          goal,
          workspace,
          testCommand: repo.testCommand,
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
          const message = describeStep(step.toolCalls);
          return (
            (await touchHeld(tx, deps, claim, { type: "agent_step", message })).cancelRequestedAt != null
          );
        },
      },
    });
    // Undefined: another worker holds the run now.
    if (!outcome) return;
    if (outcome.status === "cancelled") {
      await advance(deps, claim, "cancelled", {}, { type: "cancelled", message: "Cancelled on request." });
      return;
    }
    if (outcome.status === "failed") return void (await fail(outcome.errorCode, outcome.errorMessage));
    const proposal = await workspace.proposedChange();
    if (proposal.files.length === 0) {
      return void (await fail(
        "no_change",
        `The agent finished without changing any file: ${outcome.summary}`,
      ));
    }
    const risk = assessRisk(proposal.files, proposal.diff, (path) => !proposal.created.includes(path));
    const change = { summary: outcome.summary, files: proposal.files, diff: proposal.diff, risk };
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
