import { requirePermission, type ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { findRemediation } from "./get-remediation.ts";
import type { ProposedChange } from "./schemas.ts";

/**
 * The change the agent proposed, before any commit exists: what a person approving a
 * high-risk change reads (the review verb needs the commit, which comes after approval).
 * Nothing proposed yet is `not_found` with the run's status.
 */
export async function showProposedChange(args: {
  ctx: ServiceContext;
  input: { environmentId: string; remediationId: string };
}): Promise<ProposedChange> {
  const { ctx } = args;
  requirePermission(ctx, "remediations:read");
  const row = await findRemediation(ctx.deps.db, ctx, args.input);
  if (!row.change) {
    throw new AppError(
      "not_found",
      `Remediation ${row.id} has proposed no change yet (it is ${row.status}).`,
      {
        remediationStatus: row.status,
      },
    );
  }
  return {
    remediationId: row.id,
    status: row.status,
    summary: row.change.summary,
    files: row.change.files.map((f) => ({ path: f.path, deleted: f.content === null })),
    diff: row.change.diff,
    risk: row.change.risk,
  };
}
