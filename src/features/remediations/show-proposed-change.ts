import { requirePermission, type ServiceContext } from "../../context.ts";
import { findEnvironment } from "../environments/find-environment.ts";
import { findRemediation } from "./get-remediation.ts";

export type ProposedChange = {
  summary: string;
  files: { path: string; deleted: boolean }[];
  /** Unified diff against the base commit (bounded when it was computed). */
  diff: string;
  risk: { high: boolean; reasons: string[] };
};

/**
 * The change the agent proposed, before any commit exists: what a person approving a
 * high-risk change reads (the review verb needs the commit, which comes after approval).
 * Null while the agent has proposed nothing.
 */
export async function showProposedChange(args: {
  ctx: ServiceContext;
  input: { environmentId: string; remediationId: string };
}): Promise<ProposedChange | null> {
  const { ctx } = args;
  requirePermission(ctx, "remediations:read");
  await findEnvironment(ctx.deps.db, ctx, args.input.environmentId);
  const row = await findRemediation(ctx.deps, { organizationId: ctx.actor.organizationId, ...args.input });
  if (!row.change) return null;
  return {
    summary: row.change.summary,
    files: row.change.files.map((f) => ({ path: f.path, deleted: f.content === null })),
    diff: row.change.diff,
    risk: row.change.risk,
  };
}
