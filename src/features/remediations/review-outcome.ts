import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import { withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import type { Db } from "../../platform/db/client.ts";
import { problems } from "../../platform/db/schema/problems.ts";
import { remediations } from "../../platform/db/schema/remediations.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import { git } from "../../platform/git.ts";
import type { PullRequestOutcome } from "../source-hosting/index.ts";
import { appendEvent, type RemediationRow } from "./run-state.ts";
import { startWatch } from "./watch-fix.ts";

/**
 * A pull request of a run was closed on GitHub (verified webhook): the run moves from
 * `awaiting-review` to `merged` or `closed`. A person merged it; patchbay only records that.
 * Returns the runs moved (none for an unknown branch or a run already ended).
 */
export async function applyReviewOutcome(deps: Deps, outcome: PullRequestOutcome): Promise<string[]> {
  return withTransaction(deps.db, async (tx) => {
    const repos = await tx
      .select({ id: repositories.id })
      .from(repositories)
      .where(
        and(
          eq(repositories.provider, "github"),
          eq(repositories.installationId, outcome.installationId),
          eq(repositories.fullName, outcome.fullName),
        ),
      );
    if (repos.length === 0) return [];
    const where = and(
      inArray(
        remediations.repositoryId,
        repos.map((r) => r.id),
      ),
      eq(remediations.branch, outcome.branch),
    );
    const message = outcome.merged
      ? `The pull request was merged on GitHub: ${outcome.prUrl}`
      : `The pull request was closed without merging: ${outcome.prUrl}`;
    return (await endReviews(tx, deps, where, outcome.merged, message)).map((r) => r.id);
  });
}

/**
 * local-git has no pull request to send events: the review ends when a human merges the branch
 * into the default branch (`merged`) or deletes it (`closed`). Checked on read; GitHub runs
 * move by webhook instead.
 */
export async function syncLocalReview(deps: Deps, row: RemediationRow): Promise<RemediationRow> {
  if (!row.repositoryId || !row.headCommit || !row.branch) return row;
  const [repo] = await deps.db.select().from(repositories).where(eq(repositories.id, row.repositoryId));
  if (repo?.provider !== "local-git" || !repo.path) return row;
  const tip = `refs/heads/${repo.defaultBranch}`;
  const merged = (await git(repo.path, ["merge-base", "--is-ancestor", row.headCommit, tip])).code === 0;
  if (
    !merged &&
    (await git(repo.path, ["rev-parse", "--verify", "--quiet", `refs/heads/${row.branch}`])).code === 0
  ) {
    return row;
  }
  const message = merged
    ? `${row.branch} was merged into ${repo.defaultBranch} by hand.`
    : `${row.branch} was deleted without being merged.`;
  const [updated] = await withTransaction(deps.db, (tx) =>
    endReviews(tx, deps, eq(remediations.id, row.id), merged, message),
  );
  return updated ?? row;
}

/**
 * Moves the runs `where` matches that await review to `merged` or `closed`, each with its event.
 * A merged fix resolves its problem (open or regressed) in the same transaction and starts its
 * watch: while watched, only the watch (`watch-fix.ts`) marks the problem `regressed` — from a
 * newer `service.version` or after the grace period — which is how a fix that did not hold shows.
 */
async function endReviews(
  tx: Db,
  deps: Deps,
  where: SQL | undefined,
  merged: boolean,
  message: string,
): Promise<RemediationRow[]> {
  const status = merged ? "merged" : "closed";
  const now = deps.clock();
  const moved = await tx
    .update(remediations)
    .set({ status, finishedAt: now, updatedAt: now })
    .where(and(where, eq(remediations.status, "awaiting-review")))
    .returning();
  for (const run of moved) await appendEvent(tx, deps, run.id, { type: status, status, message });
  const watched: RemediationRow[] = [];
  for (const run of moved) {
    if (!merged || run.kind !== "fix" || !run.problemId) {
      watched.push(run);
      continue;
    }
    // From the merge on, the problem is watched: `watch-fix.ts` decides whether the fix held.
    const watch = await startWatch(tx, run, now);
    const [updated] = await tx
      .update(remediations)
      .set({ watch })
      .where(eq(remediations.id, run.id))
      .returning();
    watched.push(updated ?? run);
  }
  const fixed = moved.flatMap((r) => (r.kind === "fix" && r.problemId ? [r.problemId] : []));
  if (merged && fixed.length > 0) {
    await tx
      .update(problems)
      .set({
        status: "resolved",
        revision: sql`${problems.revision} + 1`,
        resolvedAt: now,
        statusChangedAt: now,
        updatedAt: now,
      })
      .where(and(inArray(problems.id, fixed), inArray(problems.status, ["open", "regressed"])));
  }
  return watched;
}
