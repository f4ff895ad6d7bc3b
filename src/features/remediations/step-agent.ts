import { eq } from "drizzle-orm";
import { repositories } from "../../db/schema/repositories.ts";
import type { Deps } from "../../deps.ts";
import { runAgentLoop, settleTask } from "./agent-loop.ts";
import { ensureAgentTask } from "./agent-task.ts";
import { hostFor } from "./host-for.ts";
import { assessRisk } from "./risk.ts";
import { goalMissing, runGoal } from "./run-goal.ts";
import { advance, type Claim, type RemediationRow } from "./run-state.ts";
import type { RemediationServices } from "./services.ts";
import { committedWrites } from "./transcript-messages.ts";

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
  const { run } = args;
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
    const ending = await runAgentLoop({
      ...args,
      task,
      goal,
      workspace,
      testCommand: repo.testCommand,
      scope,
    });
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
