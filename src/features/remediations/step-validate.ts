import type { Deps } from "../../deps.ts";
import { hostFor, runRepository } from "./host-for.ts";
import { advance, type Claim, failRun, type RemediationRow } from "./run-state.ts";
import type { RemediationServices } from "./services.ts";

/** Limits of the validation run: the repository's whole suite. */
export const VALIDATION_LIMITS = { timeoutMs: 10 * 60 * 1000, cpuSeconds: 10 * 60 };

/**
 * `validating`: a fresh working copy of the base with exactly the proposed files, and the
 * repository's test command in the sandbox. Only a passing suite moves on to `opening-pr`; a
 * failing one ends the run as `failed` (`tests_failed`) and no pull request is opened.
 */
export async function validateStep(args: {
  deps: Deps;
  services: RemediationServices;
  run: RemediationRow;
  claim: Claim;
}): Promise<void> {
  const { deps, services, run, claim } = args;
  const repo = await runRepository(deps.db, run);
  if (!repo || !run.baseCommit || !run.change) {
    const reason = "The repository registration or the proposed change is gone.";
    return void (await failRun(deps, claim, "repository_unavailable", reason));
  }
  const workspace = await services.sandbox.createWorkspace(
    await hostFor(services, repo).archive(repo, run.baseCommit),
  );
  try {
    for (const file of run.change.files) {
      if (file.content !== null) await workspace.writeFile(file.path, file.content);
    }
    const result = await workspace.run(repo.testCommand, VALIDATION_LIMITS);
    const validation = {
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      outputTail: result.outputTail,
      durationMs: result.durationMs,
    };
    if (result.exitCode === 0) {
      await advance(
        deps,
        claim,
        "opening-pr",
        { validation },
        {
          type: "tests_passed",
          message: `\`${repo.testCommand}\` passed with the change (${result.durationMs} ms).`,
          data: { exitCode: 0 },
        },
      );
      return;
    }
    const how = result.timedOut
      ? "timed out"
      : result.outputCapped
        ? "printed too much"
        : `exited ${result.exitCode}`;
    const reason = `The repository's tests fail with the proposed change (\`${repo.testCommand}\` ${how}); no pull request was opened.`;
    await advance(
      deps,
      claim,
      "failed",
      { validation, reasonCode: "tests_failed", reason },
      {
        type: "failed",
        message: reason,
        data: { exitCode: result.exitCode, timedOut: result.timedOut },
      },
    );
  } finally {
    await workspace.dispose();
  }
}
