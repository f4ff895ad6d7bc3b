import { and, eq, inArray } from "drizzle-orm";
import { withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { remediations } from "../../platform/db/schema/remediations.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import type { PullRequestOutcome } from "../source-hosting/github/github-integration.ts";
import { resolveMergedProblems } from "./resolve-merged-problems.ts";
import { appendEvent } from "./run-state.ts";

/**
 * A pull request of a run was closed on GitHub (verified webhook): the run moves from
 * `awaiting-review` to `merged` or `closed`. A person merged it; patchbay only records that (and
 * marks the problem the fix was for resolved).
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
    const status = outcome.merged ? "merged" : "closed";
    const now = deps.clock();
    const moved = await tx
      .update(remediations)
      .set({ status, finishedAt: now, updatedAt: now })
      .where(
        and(
          inArray(
            remediations.repositoryId,
            repos.map((r) => r.id),
          ),
          eq(remediations.branch, outcome.branch),
          eq(remediations.status, "awaiting-review"),
        ),
      )
      .returning({ id: remediations.id });
    for (const run of moved) {
      await appendEvent(tx, deps, run.id, {
        type: status,
        status,
        message: outcome.merged
          ? `The pull request was merged on GitHub: ${outcome.prUrl}`
          : `The pull request was closed without merging: ${outcome.prUrl}`,
      });
    }
    const ids = moved.map((r) => r.id);
    if (outcome.merged) await resolveMergedProblems(tx, deps, ids);
    return ids;
  });
}
