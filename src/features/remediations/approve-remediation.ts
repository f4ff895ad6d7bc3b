import {
  requireOwnerOrAdmin,
  requirePermission,
  type ServiceContext,
  withTransaction,
} from "../../context.ts";
import { AppError } from "../../errors.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { findRemediation, readRemediation } from "./get-remediation.ts";
import { moveIdle } from "./run-state.ts";
import type { Remediation } from "./schemas.ts";

/**
 * A person approves a high-risk change that waits in `awaiting-approval`; the run goes on to
 * validation. Repository access is granted by registering the repository instead (that
 * resumes the run by itself). Agents cannot call this: it needs an owner's or admin's key.
 */
export async function approveRemediation(args: {
  ctx: ServiceContext;
  input: { environmentId: string; remediationId: string };
}): Promise<Remediation> {
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
      details: { kind: row.approval.kind },
    });
  });
  return readRemediation(ctx, input);
}
