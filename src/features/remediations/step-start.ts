import type { Deps } from "../../deps.ts";
import { repositoryForService } from "../repositories/find-repository.ts";
import { hostFor } from "./host-for.ts";
import { goalMissing, goalTitle, runGoal } from "./run-goal.ts";
import { advance, type Claim, failRun, type RemediationRow } from "./run-state.ts";
import type { RemediationServices } from "./services.ts";

/**
 * `queued`: finds the repository of the goal's service (the problem's, or the one to instrument)
 * and fixes the base commit.
 * Without a repository — none registered, or its provider refuses access — the run waits in
 * `awaiting-approval` for a human to register or grant one; registering resumes it.
 */
export async function startStep(args: {
  deps: Deps;
  services: RemediationServices;
  run: RemediationRow;
  claim: Claim;
}): Promise<void> {
  const { deps, services, run, claim } = args;
  const scope = { organizationId: run.organizationId, environmentId: run.environmentId };
  const goal = await runGoal(services, run);
  if (!goal) {
    const missing = goalMissing(run);
    return void (await failRun(deps, claim, missing.code, missing.reason));
  }
  const problem = { service: goal.service, title: goalTitle(goal) };
  const repo = await repositoryForService(deps.db, scope, problem.service);
  const wait = (message: string) =>
    advance(
      deps,
      claim,
      "awaiting-approval",
      {
        service: problem.service,
        approval: { kind: "repository_access", requestedAt: deps.clock().toISOString(), message },
      },
      { type: "approval_requested", message, data: { kind: "repository_access", service: problem.service } },
    );
  if (!repo) {
    await wait(
      `No repository is registered for service "${problem.service}". An operator must install the source-hosting app or register the repository (POST /api/v1/environments/${run.environmentId}/repositories with services ["${problem.service}"]); the run resumes then.`,
    );
    return;
  }
  let baseCommit: string;
  try {
    baseCommit = await hostFor(services, repo).resolveBase(repo);
  } catch (error) {
    deps.logger.warn(
      { err: error, remediationId: run.id, repositoryId: repo.id },
      "repository not accessible",
    );
    await wait(
      `Repository ${repo.fullName ?? repo.path} (${repo.id}) cannot be read (branch "${repo.defaultBranch}"). An operator must grant access or fix the registration; the run resumes when a repository is registered again.`,
    );
    return;
  }
  await advance(
    deps,
    claim,
    "investigating",
    { service: problem.service, repositoryId: repo.id, baseCommit, approval: null },
    {
      type: "status",
      message: `Investigating ${problem.title} in ${repo.fullName ?? repo.path} at ${baseCommit.slice(0, 12)}.`,
      data: { repositoryId: repo.id, baseCommit },
    },
  );
}
