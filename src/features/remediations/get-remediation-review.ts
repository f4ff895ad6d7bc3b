import { eq } from "drizzle-orm";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import { findRemediation } from "./get-remediation.ts";
import type { RemediationReview } from "./schemas.ts";

/**
 * The review of a proposed fix: the diff, the test result and how to merge it by hand. For
 * local-git this is the "pull request" (the web UI's `/remediations/{id}/review` page renders
 * it); for GitHub the same data accompanies the draft pull request.
 */
export async function getRemediationReview(args: {
  ctx: ServiceContext;
  input: { environmentId: string; remediationId: string };
}): Promise<RemediationReview> {
  const { ctx } = args;
  requirePermission(ctx, "remediations:read");
  const row = await findRemediation(ctx.deps.db, ctx, args.input);
  if (!row.change || !row.branch || !row.headCommit || !row.baseCommit || !row.repositoryId) {
    throw new AppError(
      "not_found",
      `Remediation ${row.id} has no proposed commit yet (it is ${row.status}).`,
      // Not `status`: that member of a problem document is the HTTP status.
      { remediationStatus: row.status },
    );
  }
  const [repo] = await ctx.deps.db.select().from(repositories).where(eq(repositories.id, row.repositoryId));
  if (!repo) throw new AppError("not_found", "The repository registration of this remediation was removed.");
  const where = repo.provider === "local-git" ? (repo.path ?? "") : (repo.fullName ?? "");
  const mergeSteps =
    repo.provider === "local-git"
      ? [
          `cd ${repo.path}`,
          `git log -p ${repo.defaultBranch}..${row.branch}   # review the commit`,
          `git switch ${repo.defaultBranch}`,
          `git merge --no-ff ${row.branch}`,
          `git branch -d ${row.branch}   # optional, after merging`,
        ]
      : [
          `Open ${row.prUrl ?? "the pull request"} and review the diff and checks.`,
          "Mark the draft ready for review, then merge it on GitHub (patchbay never merges).",
        ];
  return {
    remediationId: row.id,
    status: row.status,
    provider: repo.provider,
    repository: where,
    baseBranch: repo.defaultBranch,
    baseCommit: row.baseCommit,
    branch: row.branch,
    headCommit: row.headCommit,
    prUrl: row.prUrl,
    summary: row.change.summary,
    files: row.change.files.map((f) => f.path),
    diff: row.change.diff,
    validation: row.validation,
    mergeSteps,
  };
}
