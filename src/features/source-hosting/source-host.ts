import type { ChangedFile } from "../../platform/db/schema/remediations.ts";
import type { repositories } from "../../platform/db/schema/repositories.ts";

type RepositoryRow = typeof repositories.$inferSelect;

/**
 * What a remediation run needs from where the code lives. Every call is idempotent, because a
 * step interrupted by a dying worker is run again by the next one: the branch is created once
 * (or found with the same tree), the review is opened once (or found). There is no merge call:
 * the pull request — or for local-git the review page — is the human boundary.
 */
export interface SourceHost {
  /** The default branch's commit now: the run's base for every later step. */
  resolveBase(repo: RepositoryRow): Promise<string>;
  /** A tar archive (plain or gzip) of the base commit's files. */
  archive(repo: RepositoryRow, commit: string): Promise<{ archive: Buffer; stripComponents: number }>;
  /** Branch `patchbay/<remediation id>` holding one commit on the base with the change. */
  pushChange(
    repo: RepositoryRow,
    change: { remediationId: string; baseCommit: string; files: ChangedFile[]; message: string },
  ): Promise<{ branch: string; headCommit: string }>;
  /** The review a human decides on: a draft pull request, or the local review page. */
  openReview(
    repo: RepositoryRow,
    review: { remediationId: string; branch: string; title: string; body: string },
  ): Promise<{ prUrl: string; prNumber: number | null }>;
}

export const branchFor = (remediationId: string) => `patchbay/${remediationId}`;
