import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";
import { findEnvironment } from "../environments/index.ts";
import { toTask } from "./read-tasks.ts";
import { DEFAULT_BUDGETS, type Task } from "./schemas.ts";
import { takeSnapshot } from "./take-snapshot.ts";
import { BUILTIN_TOOL_NAMES, TASK_QUEUE } from "./task-queue.ts";

/**
 * Starts a task: freezes the environment's ready connections into its snapshot (the moment the
 * task starts, for task rules 1–3) and enqueues it in the same transaction, so a task exists
 * exactly when its job does. Without a model nothing is created (`model_not_configured`).
 */
export async function createTask(args: {
  ctx: ServiceContext;
  input: {
    environmentId: string;
    instructions: string;
    budgets?: Partial<typeof DEFAULT_BUDGETS> | undefined;
  };
}): Promise<Task> {
  const { ctx, input } = args;
  const member = requireOwnerOrAdmin(ctx, "tasks:manage");
  if (!ctx.deps.languageModel) {
    throw new AppError(
      "model_not_configured",
      "No model is configured for the task agent; set PATCHBAY_MODEL (and the provider's key) and restart.",
    );
  }
  const now = ctx.deps.clock();
  return withTransaction(ctx, async (tx) => {
    await findEnvironment(tx, ctx, input.environmentId);
    const snapshot = await takeSnapshot(
      tx,
      { organizationId: ctx.actor.organizationId, environmentId: input.environmentId },
      { now, reservedNames: BUILTIN_TOOL_NAMES },
    );
    const [row] = await tx
      .insert(tasks)
      .values({
        id: newId("tsk"),
        organizationId: ctx.actor.organizationId,
        environmentId: input.environmentId,
        instructions: input.instructions,
        snapshot,
        budgets: { ...DEFAULT_BUDGETS, ...input.budgets },
        usage: { steps: 0, inputTokens: 0, outputTokens: 0 },
        transcript: [],
        createdBy: member.userId,
        createdAt: now,
      })
      .returning();
    if (!row) throw new Error("insert returned no row");
    await ctx.deps.jobs.send(TASK_QUEUE, { taskId: row.id }, { tx });
    await recordAudit(tx, ctx, {
      action: "task.created",
      targetType: "task",
      targetId: row.id,
      environmentId: row.environmentId,
      details: {
        environmentId: row.environmentId,
        connections: snapshot.connections.length,
        tools: snapshot.tools.length,
      },
    });
    return toTask(row);
  });
}
