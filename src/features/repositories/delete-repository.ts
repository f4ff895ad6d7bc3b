import { and, eq, notInArray } from "drizzle-orm";
import { requireOwnerOrAdmin, type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { remediations, terminalRemediationStatuses } from "../../platform/db/schema/remediations.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import { findRepository } from "./read-repositories.ts";

/**
 * Removes a registration. patchbay's own branches in the repository stay (they are the human's
 * to delete). A repository that an unfinished run is working on cannot go: cancel the run first.
 */
export async function deleteRepository(args: {
  ctx: ServiceContext;
  input: { environmentId: string; repositoryId: string };
}): Promise<void> {
  const { ctx } = args;
  requireOwnerOrAdmin(ctx, "repositories:manage");
  await withTransaction(ctx, async (tx) => {
    const row = await findRepository(tx, ctx, args.input);
    const [busy] = await tx
      .select({ id: remediations.id })
      .from(remediations)
      .where(
        and(
          eq(remediations.repositoryId, row.id),
          notInArray(remediations.status, [...terminalRemediationStatuses, "awaiting-review"]),
        ),
      )
      .limit(1);
    if (busy) {
      throw new AppError(
        "repository_in_use",
        `Remediation ${busy.id} is working on this repository; cancel it or let it finish first.`,
        { remediationId: busy.id },
      );
    }
    await tx.delete(repositories).where(eq(repositories.id, row.id));
    await recordAudit(tx, ctx, {
      action: "repository.deleted",
      targetType: "repository",
      targetId: row.id,
      environmentId: row.environmentId,
      details: { environmentId: row.environmentId, provider: row.provider },
    });
  });
}
