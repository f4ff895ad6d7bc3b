import { and, eq } from "drizzle-orm";
import { withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { remediations } from "../../platform/db/schema/remediations.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import { git } from "../../platform/git.ts";
import { resolveMergedProblems } from "./resolve-merged-problems.ts";
import { appendEvent, type RemediationRow } from "./run-state.ts";

/**
 * local-git has no pull request to send events: the review ends when a human merges the branch
 * into the default branch (`merged`) or deletes it (`closed`). Checked on read; GitHub runs
 * move by webhook instead.
 */
export async function syncLocalReview(deps: Deps, row: RemediationRow): Promise<RemediationRow> {
  if (!row.repositoryId || !row.headCommit || !row.branch) return row;
  const [repo] = await deps.db.select().from(repositories).where(eq(repositories.id, row.repositoryId));
  if (repo?.provider !== "local-git" || !repo.path) return row;
  const merged = await git(repo.path, [
    "merge-base",
    "--is-ancestor",
    row.headCommit,
    `refs/heads/${repo.defaultBranch}`,
  ]);
  let next: "merged" | "closed" | undefined;
  if (merged.code === 0) next = "merged";
  else if (
    (await git(repo.path, ["rev-parse", "--verify", "--quiet", `refs/heads/${row.branch}`])).code !== 0
  ) {
    next = "closed";
  }
  if (!next) return row;
  const status = next;
  return withTransaction(deps.db, async (tx) => {
    const now = deps.clock();
    const [updated] = await tx
      .update(remediations)
      .set({ status, finishedAt: now, updatedAt: now })
      .where(and(eq(remediations.id, row.id), eq(remediations.status, "awaiting-review")))
      .returning();
    if (!updated) return row;
    if (status === "merged") await resolveMergedProblems(tx, deps, [row.id]);
    await appendEvent(tx, deps, row.id, {
      type: status,
      status,
      message:
        status === "merged"
          ? `${row.branch} was merged into ${repo.defaultBranch} by hand.`
          : `${row.branch} was deleted without being merged.`,
    });
    return updated;
  });
}
