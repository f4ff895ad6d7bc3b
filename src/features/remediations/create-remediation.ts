import { requireOwnerOrAdmin, requirePermission, type ServiceContext } from "../../context.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { findEnvironment } from "../environments/find-environment.ts";
import { getRemediation } from "./get-remediation.ts";
import type { Remediation } from "./schemas.ts";
import { startRemediation } from "./start-remediation.ts";

/** `POST …/problems/{problemId}/remediations` for a person: the same run an agent gets. */
export async function createRemediation(args: {
  ctx: ServiceContext;
  input: {
    environmentId: string;
    problemId: string;
    budgets?: { maxSteps?: number; maxTokens?: number; maxDurationMs?: number } | undefined;
  };
}): Promise<Remediation> {
  const { ctx, input } = args;
  requirePermission(ctx, "remediations:manage");
  const member = requireOwnerOrAdmin(ctx);
  await findEnvironment(ctx.deps.db, ctx, input.environmentId);
  const started = await startRemediation({
    deps: ctx.deps,
    organizationId: ctx.actor.organizationId,
    environmentId: input.environmentId,
    problemId: input.problemId,
    requestedBy: member.userId,
    budgets: input.budgets,
    alsoInTransaction: (tx, result) =>
      recordAudit(tx, ctx, {
        action: "remediation.created",
        targetType: "remediation",
        targetId: result.remediationId,
        details: { environmentId: input.environmentId, problemId: input.problemId },
      }),
  });
  return getRemediation({
    deps: ctx.deps,
    organizationId: ctx.actor.organizationId,
    environmentId: input.environmentId,
    remediationId: started.remediationId,
  });
}
