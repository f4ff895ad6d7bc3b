import { and, desc, eq } from "drizzle-orm";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { remediationEvents, remediations } from "../../platform/db/schema/remediations.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import { findEnvironment } from "../environments/index.ts";
import { syncLocalReview } from "./review-outcome.ts";
import type { RemediationRow } from "./run-state.ts";
import type { ProposedChange, Remediation, RemediationReview } from "./schemas.ts";
import { toRemediation } from "./to-remediation.ts";
import { evaluateWatch } from "./watch-fix.ts";

const MAX_EVENTS = 200;

/** A run id's syntax (`rem_` + base-32), checked before any lookup. */
const RUN_ID = /^rem_[0-9a-z]{1,60}$/;

type RunRef = { environmentId?: string | undefined; remediationId: string };
type EnvRunRef = { environmentId: string; remediationId: string };

/**
 * One run with its latest progress events, for polling: a person on REST (the environment named
 * in the path), an agent on the free x402 poll with its onboarding session's token (its
 * organisation's runs, whatever the environment).
 */
export async function getRemediation(args: { ctx: ServiceContext; input: RunRef }): Promise<Remediation> {
  requirePermission(args.ctx, "remediations:read");
  return readRemediation(args.ctx, args.input);
}

/**
 * The run as its pollers see it. A local-git run awaiting review learns here whether its branch
 * was merged or deleted by hand.
 */
export async function readRemediation(ctx: ServiceContext, ref: RunRef): Promise<Remediation> {
  const { deps } = ctx;
  let row = await findRemediation(deps.db, ctx, ref);
  if (row.status === "awaiting-review") row = await syncLocalReview(deps, row);
  if (row.status === "merged" && row.watch?.state === "watching") row = await evaluateWatch(deps, row);
  const events = await deps.db
    .select()
    .from(remediationEvents)
    .where(eq(remediationEvents.remediationId, row.id))
    .orderBy(desc(remediationEvents.id))
    .limit(MAX_EVENTS);
  return toRemediation(deps.config.baseUrl, row, events.reverse());
}

/**
 * The caller's run: scoped to its organisation, and to the environment when one is named (which
 * must be the caller's: `findEnvironment`). Another tenant's run is not found. `forUpdate` locks
 * the row inside a transaction.
 */
export async function findRemediation(
  db: Db,
  ctx: ServiceContext,
  ref: RunRef,
  opts: { forUpdate?: boolean } = {},
): Promise<RemediationRow> {
  if (ref.environmentId) await findEnvironment(db, ctx, ref.environmentId);
  const query = db
    .select()
    .from(remediations)
    .where(
      and(
        eq(remediations.id, ref.remediationId),
        eq(remediations.organizationId, ctx.actor.organizationId),
        ref.environmentId ? eq(remediations.environmentId, ref.environmentId) : undefined,
      ),
    )
    .limit(1);
  const [row] = opts.forUpdate ? await query.for("update") : await query;
  if (!row) throw new AppError("not_found", `Remediation ${ref.remediationId} was not found.`);
  return row;
}

/**
 * The change the agent proposed, before any commit exists: what a person approving a
 * high-risk change reads (the review needs the commit, which comes after approval).
 */
export async function showProposedChange(args: {
  ctx: ServiceContext;
  input: EnvRunRef;
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
  const { summary, files, diff, risk } = row.change;
  return {
    remediationId: row.id,
    status: row.status,
    summary,
    files: files.map((f) => ({ path: f.path, deleted: f.content === null })),
    diff,
    risk,
  };
}

/**
 * The review of a proposed fix: the diff, the test result and how to merge it by hand. For
 * local-git this is the "pull request" (the web UI's `/remediations/{id}/review` page renders
 * it); for GitHub the same data accompanies the draft pull request.
 */
export async function getRemediationReview(args: {
  ctx: ServiceContext;
  input: EnvRunRef;
}): Promise<RemediationReview> {
  const { ctx } = args;
  requirePermission(ctx, "remediations:read");
  const row = await findRemediation(ctx.deps.db, ctx, args.input);
  const { change, branch, headCommit, baseCommit } = row;
  if (!change || !branch || !headCommit || !baseCommit || !row.repositoryId) {
    throw new AppError(
      "not_found",
      `Remediation ${row.id} has no proposed commit yet (it is ${row.status}).`,
      // Not `status`: that member of a problem document is the HTTP status.
      { remediationStatus: row.status },
    );
  }
  const [repo] = await ctx.deps.db.select().from(repositories).where(eq(repositories.id, row.repositoryId));
  if (!repo) throw new AppError("not_found", "The repository registration of this remediation was removed.");
  const local = repo.provider === "local-git";
  return {
    remediationId: row.id,
    status: row.status,
    provider: repo.provider,
    repository: (local ? repo.path : repo.fullName) ?? "",
    baseBranch: repo.defaultBranch,
    baseCommit,
    branch,
    headCommit,
    prUrl: row.prUrl,
    summary: change.summary,
    files: change.files.map((f) => f.path),
    diff: change.diff,
    validation: row.validation,
    verification: row.verification,
    mergeSteps: local
      ? [
          `cd ${repo.path}`,
          `git log -p ${repo.defaultBranch}..${branch}   # review the commit`,
          `git switch ${repo.defaultBranch}`,
          `git merge --no-ff ${branch}`,
          `git branch -d ${branch}   # optional, after merging`,
        ]
      : [
          `Open ${row.prUrl ?? "the pull request"} and review the diff and checks.`,
          "Mark the draft ready for review, then merge it on GitHub (patchbay never merges).",
        ],
  };
}

/**
 * Which organisation and environment a run belongs to, for the links patchbay hands out
 * (`{baseUrl}/remediations/{id}`, `…/review`, `…/approval`) that carry no organisation. It
 * authorises nothing: the caller must then check the person's membership of that organisation
 * and treat a non-member exactly like an unknown id (undefined here), so the answer never tells
 * an outsider that a run exists.
 */
export async function locateRemediation(args: {
  db: Db;
  input: { remediationId: string };
}): Promise<{ organizationId: string; environmentId: string } | undefined> {
  if (!RUN_ID.test(args.input.remediationId)) return undefined;
  const [row] = await args.db
    .select({ organizationId: remediations.organizationId, environmentId: remediations.environmentId })
    .from(remediations)
    .where(eq(remediations.id, args.input.remediationId))
    .limit(1);
  return row;
}
