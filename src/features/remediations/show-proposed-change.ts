import { requirePermission, type ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { findEnvironment } from "../environments/find-environment.ts";
import { findRemediation } from "./get-remediation.ts";
import type { ProposedChange } from "./schemas.ts";

type Input = { environmentId: string; remediationId: string };

/**
 * The change the agent proposed, before any commit exists: what a person approving a
 * high-risk change reads (the review verb needs the commit, which comes after approval).
 * Null while the agent has proposed nothing.
 */
export async function showProposedChange(args: {
  ctx: ServiceContext;
  input: Input;
}): Promise<ProposedChange | null> {
  return (await loadProposal(args)).change;
}

/** The same for the API: nothing proposed yet is a 404 that says the run's status. */
export async function getProposedChange(args: {
  ctx: ServiceContext;
  input: Input;
}): Promise<ProposedChange> {
  const { row, change } = await loadProposal(args);
  if (!change) {
    throw new AppError(
      "not_found",
      `Remediation ${row.id} has proposed no change yet (it is ${row.status}).`,
      // Not `status`: that member of a problem document is the HTTP status.
      { remediationStatus: row.status },
    );
  }
  return change;
}

async function loadProposal(args: { ctx: ServiceContext; input: Input }) {
  const { ctx } = args;
  requirePermission(ctx, "remediations:read");
  await findEnvironment(ctx.deps.db, ctx, args.input.environmentId);
  const row = await findRemediation(ctx.deps, { organizationId: ctx.actor.organizationId, ...args.input });
  const change: ProposedChange | null = row.change
    ? {
        remediationId: row.id,
        status: row.status,
        summary: row.change.summary,
        files: row.change.files.map((f) => ({ path: f.path, deleted: f.content === null })),
        diff: row.change.diff,
        risk: row.change.risk,
      }
    : null;
  return { row, change };
}
