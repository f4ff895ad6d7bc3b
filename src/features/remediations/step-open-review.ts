import type { Deps } from "../../deps.ts";
import { hostFor, runRepository } from "./host-for.ts";
import { advance, type Claim, failRun, type RemediationRow, updateHeld } from "./run-state.ts";
import type { RemediationServices } from "./services.ts";
import { threadUrlFor } from "./to-remediation.ts";

/**
 * `opening-pr`: the change as one commit on `patchbay/<id>`, then the review (a draft pull
 * request, or the local review page). Both host calls are idempotent, so a worker that takes
 * over after a crash between them finds the branch and does not push or open twice.
 */
export async function openReviewStep(args: {
  deps: Deps;
  services: RemediationServices;
  run: RemediationRow;
  claim: Claim;
}): Promise<void> {
  const { deps, services, claim } = args;
  let run = args.run;
  const repo = await runRepository(deps.db, run);
  if (!repo || !run.baseCommit || !run.change) {
    const reason = "The repository registration or the proposed change is gone.";
    return void (await failRun(deps, claim, "repository_unavailable", reason));
  }
  const host = hostFor(services, repo);
  const change = run.change;
  const instrumenting = run.kind === "instrumentation";
  const title = (
    instrumenting
      ? `feat: OpenTelemetry instrumentation for ${run.service ?? "the service"}`
      : `fix: ${firstLine(change.summary)}`
  ).slice(0, 120);
  const goal = instrumenting
    ? `Requested: OpenTelemetry instrumentation for service ${run.service ?? "unknown"}`
    : `Problem: ${run.problemId} (service ${run.service ?? "unknown"})`;
  if (!run.headCommit || !run.branch) {
    const pushed = await host.pushChange(repo, {
      remediationId: run.id,
      baseCommit: run.baseCommit,
      files: change.files,
      message: `${title}\n\n${change.summary}\n\nProposed by patchbay run ${run.id}. ${goal}.\n`,
    });
    run = await updateHeld(
      deps,
      claim,
      { branch: pushed.branch, headCommit: pushed.headCommit },
      {
        type: "branch_pushed",
        message: `Committed ${pushed.headCommit.slice(0, 12)} on ${pushed.branch}.`,
        data: pushed,
      },
    );
  }
  const branch = run.branch ?? "";
  const review = await host.openReview(repo, {
    remediationId: run.id,
    branch,
    title,
    body: [
      change.summary,
      "",
      goal,
      `Thread: ${threadUrlFor(deps.config.baseUrl, run.id)}`,
      `Tests: \`${repo.testCommand}\` passed in patchbay's sandbox.`,
      "",
      "patchbay never merges: review and merge this yourself.",
    ].join("\n"),
  });
  await advance(
    deps,
    claim,
    "awaiting-review",
    { prUrl: review.prUrl, prNumber: review.prNumber },
    {
      type: "review_opened",
      message: `Review ready: ${review.prUrl}`,
      data: review,
    },
  );
}

const firstLine = (text: string) => text.split("\n", 1)[0]?.trim() || "remediation";
