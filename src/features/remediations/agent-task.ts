import { eq } from "drizzle-orm";
import { withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { newId } from "../../ids.ts";
import { remediations } from "../../platform/db/schema/remediations.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";
import type { RepositoryRow } from "../repositories/to-repository.ts";
import { takeSnapshot } from "../tasks/take-snapshot.ts";
import { BUILTIN_TOOL_NAMES } from "../tasks/task-queue.ts";
import { goalPrompt } from "./instructions.ts";
import type { RunGoal } from "./run-goal.ts";
import { type Claim, type RemediationRow, touchHeld } from "./run-state.ts";

/**
 * The run's agent task (kind `remediation`), created once under the claim together with the
 * run's reference to it: its snapshot of the environment's ready customer tools is frozen at
 * that moment (task rules 1–3), and a resumed run finds the same task and transcript.
 */
export async function ensureAgentTask(args: {
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
    const snapshot = await takeSnapshot(
      tx,
      { organizationId: run.organizationId, environmentId: run.environmentId },
      { now, reservedNames: BUILTIN_TOOL_NAMES },
    );
    const [task] = await tx
      .insert(tasks)
      .values({
        id: newId("tsk"),
        organizationId: run.organizationId,
        environmentId: run.environmentId,
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
