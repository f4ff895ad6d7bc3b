import { and, eq, isNull } from "drizzle-orm";
import {
  requireOwnerOrAdmin,
  requirePermission,
  type ServiceContext,
  withTransaction,
} from "../../context.ts";
import { AppError } from "../../errors.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { remediations } from "../../platform/db/schema/remediations.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";
import { findRemediation, readRemediation } from "./get-remediation.ts";
import { appendEvent, CANCELLED, moveIdle } from "./run-state.ts";
import type { Remediation } from "./schemas.ts";

type RunRef = { environmentId: string; remediationId: string };

/**
 * Cancels a run. One that no worker holds (queued, waiting for approval) is cancelled at once;
 * a working one is asked to stop, its agent's task with it (the gate refuses the rest of the step's
 * tool calls), and it ends after the step in progress (its worker checks after every model step and
 * before every transition). A run in review is ended by closing its pull request, not here;
 * finished runs cannot be cancelled.
 */
export async function cancelRemediation(args: { ctx: ServiceContext; input: RunRef }): Promise<Remediation> {
  const { ctx, input } = args;
  requirePermission(ctx, "remediations:manage");
  requireOwnerOrAdmin(ctx);
  await withTransaction(ctx, async (tx) => {
    const row = await findRemediation(tx, ctx, input, { forUpdate: true });
    if (["merged", "closed", "failed", "cancelled", "awaiting-review"].includes(row.status)) {
      throw new AppError(
        "remediation_not_cancellable",
        row.status === "awaiting-review"
          ? "The run is waiting for review; close its pull request (or delete its branch) instead."
          : `The run has already ${row.status === "failed" || row.status === "cancelled" ? "ended" : "finished"} (${row.status}).`,
        { remediationStatus: row.status },
      );
    }
    if (row.status === "queued" || row.status === "awaiting-approval") {
      await moveIdle(tx, ctx.deps, row, "cancelled", { cancelRequestedAt: ctx.deps.clock() }, CANCELLED);
    } else if (!row.cancelRequestedAt) {
      const now = ctx.deps.clock();
      await tx.update(remediations).set({ cancelRequestedAt: now }).where(eq(remediations.id, row.id));
      // The run's agent is a task: asking it to stop too makes the gate refuse the step's
      // remaining tool calls at once, instead of letting them run until the step ends.
      if (row.taskId) {
        await tx
          .update(tasks)
          .set({ cancelRequestedAt: now })
          .where(and(eq(tasks.id, row.taskId), isNull(tasks.cancelRequestedAt)));
      }
      await appendEvent(tx, ctx.deps, row.id, {
        type: "cancel_requested",
        message: "Cancellation requested; the run stops after the step in progress.",
      });
    }
    await recordAudit(tx, ctx, {
      action: "remediation.cancel_requested",
      targetType: "remediation",
      targetId: row.id,
      environmentId: row.environmentId,
      details: { status: row.status },
    });
  });
  return readRemediation(ctx, input);
}

/**
 * A person approves a high-risk change that waits in `awaiting-approval`; the run goes on to
 * validation. Repository access is granted by registering the repository instead (that
 * resumes the run by itself). Agents cannot call this: it needs an owner's or admin's key.
 */
export async function approveRemediation(args: { ctx: ServiceContext; input: RunRef }): Promise<Remediation> {
  const { ctx, input } = args;
  requirePermission(ctx, "remediations:manage");
  const member = requireOwnerOrAdmin(ctx);
  await withTransaction(ctx, async (tx) => {
    const row = await findRemediation(tx, ctx, input, { forUpdate: true });
    if (row.status !== "awaiting-approval" || row.approval?.kind !== "high_risk_change") {
      throw new AppError(
        "approval_not_pending",
        row.status === "awaiting-approval"
          ? "The run waits for repository access: register the repository for its service to resume it."
          : `The run is ${row.status}; there is nothing to approve.`,
        { remediationStatus: row.status },
      );
    }
    const now = ctx.deps.clock();
    await moveIdle(
      tx,
      ctx.deps,
      row,
      "validating",
      { approval: { ...row.approval, grantedAt: now.toISOString(), grantedBy: member.userId } },
      { type: "approval_granted", message: "A human approved the change.", data: { by: member.userId } },
    );
    await recordAudit(tx, ctx, {
      action: "remediation.approved",
      targetType: "remediation",
      targetId: row.id,
      environmentId: row.environmentId,
      details: { kind: row.approval.kind },
    });
  });
  return readRemediation(ctx, input);
}
