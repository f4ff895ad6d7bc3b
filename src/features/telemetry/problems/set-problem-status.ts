import { and, eq } from "drizzle-orm";
import {
  requireOwnerOrAdmin,
  requirePermission,
  type ServiceContext,
  withTransaction,
} from "../../../context.ts";
import { AppError } from "../../../errors.ts";
import { recordAudit } from "../../../platform/audit/record-audit.ts";
import { problems } from "../../../platform/db/schema/problems.ts";
import { findEnvironment } from "../../environments/index.ts";
import { problemColumns, toProblem } from "./problem-columns.ts";
import type { Problem } from "./schemas.ts";

/**
 * A person marks a problem `resolved`, `ignored` or `open` again. The row is locked and its
 * revision checked, so of two concurrent changes from the same read exactly one applies; asking
 * for the status it already has changes nothing (no new revision, no audit entry). Resolving
 * stamps `resolvedAt`: occurrences after it regress the problem, earlier (late) ones do not.
 */
export async function setProblemStatus(args: {
  ctx: ServiceContext;
  input: {
    environmentId: string;
    problemId: string;
    revision: number;
    status: "open" | "resolved" | "ignored";
  };
}): Promise<Problem> {
  const { ctx, input } = args;
  requirePermission(ctx, "problems:manage");
  requireOwnerOrAdmin(ctx);
  return withTransaction(ctx, async (tx) => {
    const env = await findEnvironment(tx, ctx, input.environmentId);
    const [row] = await tx
      .select(problemColumns)
      .from(problems)
      .where(and(eq(problems.id, input.problemId), eq(problems.environmentId, env.id)))
      .for("update");
    if (!row) throw new AppError("not_found", `Problem ${input.problemId} was not found.`);
    if (row.revision !== input.revision) {
      throw new AppError(
        "revision_conflict",
        "The problem changed since you read it (a status change, or a regression); read it again and repeat the change with the current revision.",
        { currentRevision: row.revision },
      );
    }
    if (row.status === input.status) return toProblem(row);
    const now = ctx.deps.clock();
    const [updated] = await tx
      .update(problems)
      .set({
        status: input.status,
        revision: row.revision + 1,
        statusChangedAt: now,
        resolvedAt: input.status === "resolved" ? now : null,
        updatedAt: now,
      })
      .where(eq(problems.id, row.id))
      .returning();
    if (!updated) throw new Error("problem update returned no row");
    await recordAudit(tx, ctx, {
      action: "problem.status_changed",
      targetType: "problem",
      targetId: row.id,
      environmentId: env.id,
      details: { environmentId: env.id, from: row.status, to: input.status, revision: updated.revision },
    });
    return toProblem({
      ...updated,
      remediationId: row.remediationId,
      remediationState: row.remediationState,
    });
  });
}
