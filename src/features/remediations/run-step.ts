import { eq } from "drizzle-orm";
import { requirePermission, type ServiceContext, systemContext } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { isAppError } from "../../errors.ts";
import {
  type RemediationChange,
  type RemediationVerification,
  remediations,
  type VerificationRun,
} from "../../platform/db/schema/remediations.ts";
import type { Workspace } from "../../platform/sandbox/sandbox.ts";
import { checkRelativePath } from "../../platform/sandbox/workspace-paths.ts";
import {
  findReferencedRepository,
  parseRepositoryReference,
  type RepositoryRow,
  repositoryForService,
} from "../repositories/index.ts";
import { REMEDIATION_QUEUE } from "../tasks/index.ts";
import { checkOnBase, diffOf } from "./reproduction.ts";
import { goalMissing, goalTitle, runGoal } from "./run-goal.ts";
import {
  advance,
  CANCELLED,
  type Claim,
  claimStep,
  failRun,
  LostClaim,
  type RemediationRow,
  updateHeld,
} from "./run-state.ts";
import { hostFor, type RemediationServices, runRepository } from "./services.ts";
import { AGENT_TEST_LIMITS, recordRun } from "./test-runner.ts";
import { threadUrlFor } from "./to-remediation.ts";

/** Limits of the validation run: the repository's whole suite. */
const VALIDATION_LIMITS = { timeoutMs: 10 * 60 * 1000, cpuSeconds: 10 * 60 };

type Step = { deps: Deps; services: RemediationServices; run: RemediationRow; claim: Claim };

/**
 * Runs remediation steps on this instance; pg-boss hands each job to one worker at a time, and
 * the system runs it acting for the organisation that owns the run.
 */
export async function registerRemediationWorker(
  deps: Deps,
  opts: { concurrency?: number } = {},
): Promise<void> {
  await deps.jobs.work(
    REMEDIATION_QUEUE,
    async (job) => {
      const { remediationId, stepSeq } = job.data;
      if (typeof remediationId !== "string" || typeof stepSeq !== "number") {
        throw new Error("remediation job without remediationId/stepSeq");
      }
      const [run] = await deps.db
        .select({ organizationId: remediations.organizationId })
        .from(remediations)
        .where(eq(remediations.id, remediationId));
      if (!run) return;
      const ctx = systemContext(deps, {
        name: "remediation-step",
        id: `${remediationId}:${stepSeq}`,
        organizationId: run.organizationId,
      });
      await runRemediationStep({ ctx, input: { remediationId, stepSeq }, signal: job.signal });
    },
    { concurrency: opts.concurrency ?? 2 },
  );
}

/**
 * One job: one step of one run. The job names the step (`stepSeq`); a job for a step the run
 * has left is stale and does nothing, and claiming raises the run's lease so an earlier holder
 * of the same step (a worker pg-boss gave up on) can no longer write. Each step ends by moving
 * the run and enqueueing its successor in one transaction (`advance`).
 */
export async function runRemediationStep(args: {
  ctx: ServiceContext;
  input: { remediationId: string; stepSeq: number };
  signal: AbortSignal;
}): Promise<void> {
  const { ctx } = args;
  requirePermission(ctx, "remediations:manage");
  const deps = ctx.deps;
  const run = await claimStep(deps.db, args.input);
  if (!run) return;
  const claim: Claim = { id: run.id, stepSeq: run.stepSeq, lease: run.lease };
  const step = { deps, services: deps.remediation, run, claim };
  try {
    if (run.cancelRequestedAt) return void (await advance(deps, claim, "cancelled", {}, CANCELLED));
    switch (run.status) {
      case "queued":
        return await startStep(step);
      case "investigating":
      case "coding":
        // The agent's code (the AI SDK, the MCP client) loads with the first run that needs it.
        return await (await import("./step-agent.ts")).agentStep({ ...step, ctx, signal: args.signal });
      case "validating":
        return await validateStep(step);
      case "opening-pr":
        return await openReviewStep(step);
      default:
        // Waiting and review states have no step: a job here is stale.
        return;
    }
  } catch (error) {
    if (error instanceof LostClaim) return;
    deps.logger.error({ err: error, remediationId: run.id, status: run.status }, "remediation step failed");
    const code = isAppError(error) ? error.code : "internal";
    const reason = isAppError(error)
      ? error.message
      : `The ${run.status} step failed unexpectedly; see the service log (remediation ${run.id}).`;
    await failRun(deps, claim, code, reason, { code }).catch((e: unknown) => {
      if (!(e instanceof LostClaim)) throw e;
    });
  }
}

/**
 * `queued`: finds the repository the requester named, or else the one of the goal's service (the
 * problem's, or the one to instrument), and fixes the base commit. Without a repository — none
 * registered, or its provider refuses access — the run waits in `awaiting-approval` for a human
 * to register or grant one; registering resumes it.
 */
async function startStep({ deps, services, run, claim }: Step): Promise<void> {
  const goal = await runGoal(services, run);
  if (!goal) {
    const missing = goalMissing(run);
    return void (await failRun(deps, claim, missing.code, missing.reason));
  }
  const { service } = goal;
  const scope = { organizationId: run.organizationId, environmentId: run.environmentId };
  const named = run.requestedRepository ? parseRepositoryReference(run.requestedRepository) : undefined;
  const repo = named
    ? await findReferencedRepository(deps.db, scope, named)
    : await repositoryForService(deps.db, scope, service);
  const wait = async (message: string) => {
    const approval = { kind: "repository_access" as const, requestedAt: deps.clock().toISOString(), message };
    await advance(
      deps,
      claim,
      "awaiting-approval",
      { service, approval },
      { type: "approval_requested", message, data: { kind: "repository_access", service } },
    );
  };
  if (!repo && named && "id" in named) {
    // Checked when the run started: the registration was removed since, and no new one has its id.
    const reason = `Repository ${named.id} is no longer registered in this environment.`;
    return void (await failRun(deps, claim, "repository_unavailable", reason));
  }
  if (!repo && named) {
    return wait(
      `Repository ${run.requestedRepository} is not registered in this environment. An operator must install the GitHub App, give it access to ${run.requestedRepository} and register it (POST /api/v1/environments/${run.environmentId}/repositories, provider github); the run resumes then.`,
    );
  }
  if (!repo) {
    return wait(
      `No repository is registered for service "${service}". An operator must install the source-hosting app or register the repository (POST /api/v1/environments/${run.environmentId}/repositories with services ["${service}"]); the run resumes then.`,
    );
  }
  let baseCommit: string;
  try {
    baseCommit = await hostFor(services, repo).resolveBase(repo);
  } catch (error) {
    deps.logger.warn(
      { err: error, remediationId: run.id, repositoryId: repo.id },
      "repository not accessible",
    );
    return wait(
      `Repository ${repo.fullName ?? repo.path} (${repo.id}) cannot be read (branch "${repo.defaultBranch}"). An operator must grant access or fix the registration; the run resumes when a repository is registered again.`,
    );
  }
  await advance(
    deps,
    claim,
    "investigating",
    { service, repositoryId: repo.id, baseCommit, approval: null },
    {
      type: "status",
      message: `Investigating ${goalTitle(goal)} in ${repo.fullName ?? repo.path} at ${baseCommit.slice(0, 12)}.`,
      data: { repositoryId: repo.id, baseCommit },
    },
  );
}

/** The repository, base and change the later steps work on; undefined (the run failed) when gone. */
async function proposal({ deps, run, claim }: Step) {
  const repo = await runRepository(deps.db, run);
  if (repo && run.baseCommit && run.change) return { repo, baseCommit: run.baseCommit, change: run.change };
  const reason = "The repository registration or the proposed change is gone.";
  await failRun(deps, claim, "repository_unavailable", reason);
}

/**
 * `validating`: a fresh working copy of the base with exactly the proposed files, and the
 * repository's test command in the sandbox; then, for a fix, the verification (`verifyFix`).
 * Only a passing suite whose reproduction (if any) passes moves on to `opening-pr`; otherwise the
 * run ends `failed` (`tests_failed`, `reproduction_still_fails`) and no pull request is opened.
 */
async function validateStep(step: Step): Promise<void> {
  const { deps, services, claim, run } = step;
  const found = await proposal(step);
  if (!found) return;
  const { repo, baseCommit, change } = found;
  const workspace = await services.sandbox.createWorkspace(
    await hostFor(services, repo).archive(repo, baseCommit),
  );
  try {
    for (const file of change.files) {
      if (file.content !== null) await workspace.writeFile(file.path, file.content);
    }
    const result = await workspace.run(repo.testCommand, VALIDATION_LIMITS);
    const { exitCode, timedOut, outputTail, durationMs } = result;
    const validation = { exitCode, timedOut, outputTail, durationMs };
    const suiteRun = recordRun(repo.testCommand, result);
    if (exitCode !== 0) {
      const how = timedOut ? "timed out" : result.outputCapped ? "printed too much" : `exited ${exitCode}`;
      const reason = `The repository's tests fail with the proposed change (\`${repo.testCommand}\` ${how}); no pull request was opened.`;
      const verification = run.kind === "fix" ? notFixed(deps, change, reason, { suiteRun }) : null;
      await advance(
        deps,
        claim,
        "failed",
        { validation, verification, reasonCode: "tests_failed", reason },
        { type: "failed", message: reason, data: { exitCode, timedOut, verification: verification?.state } },
      );
      return;
    }
    const verification =
      run.kind === "fix" ? await verifyFix({ ...step, repo, baseCommit, change, workspace, suiteRun }) : null;
    if (verification?.state === "not-fixed") {
      const reason = `${verification.reason} No pull request was opened.`;
      await advance(
        deps,
        claim,
        "failed",
        { validation, verification, reasonCode: "reproduction_still_fails", reason },
        { type: "failed", message: reason, data: { verification: verification.state } },
      );
      return;
    }
    const message = `\`${repo.testCommand}\` passed with the change (${durationMs} ms).${verification ? ` ${describeVerification(verification)}` : ""}`;
    await advance(
      deps,
      claim,
      "opening-pr",
      { validation, verification },
      {
        type: "tests_passed",
        message,
        data: { exitCode, ...(verification ? { verification: verification.state } : {}) },
      },
    );
  } finally {
    await workspace.dispose();
  }
}

const notFixed = (
  deps: Deps,
  change: RemediationChange,
  reason: string,
  runs: Partial<Pick<RemediationVerification, "baseRun" | "branchRun" | "suiteRun">>,
  reproduction: RemediationVerification["reproduction"] = null,
): RemediationVerification => ({
  state: "not-fixed",
  reason,
  reproduction:
    reproduction ??
    (change.reproduction
      ? {
          tests: change.reproduction.tests,
          name: change.reproduction.name ?? null,
          matched: null,
          testDiff: diffOf(change.diff, change.reproduction.tests),
        }
      : null),
  baseRun: runs.baseRun ?? null,
  branchRun: runs.branchRun ?? null,
  suiteRun: runs.suiteRun ?? null,
  verifiedAt: deps.clock().toISOString(),
});

/** One sentence for events and the pull request. */
function describeVerification(v: RemediationVerification): string {
  if (v.state === "reproduced-and-fixed") {
    return `Reproduced: ${v.reproduction?.tests.join(", ")} fails on the default branch (${v.reproduction?.matched}) and passes with the fix.`;
  }
  if (v.state === "fixed-without-reproduction") return `Fixed without a reproducing test: ${v.reason}`;
  return `Not fixed: ${v.reason}`;
}

/**
 * The run's own proof of a fix, in the sandbox: the test(s) the agent named as the reproduction
 * must fail on the default branch (base commit plus only those files) with the problem's
 * failure, and pass on the fix branch (`workspace`, where the whole suite just passed). Without
 * a valid reproduction the fix is `fixed-without-reproduction`, with the agent's reason or why
 * its test was refused; a reproduction that still fails with the fix is `not-fixed`.
 */
async function verifyFix(args: {
  deps: Deps;
  services: RemediationServices;
  run: RemediationRow;
  repo: RepositoryRow;
  baseCommit: string;
  change: RemediationChange;
  workspace: Workspace;
  suiteRun: VerificationRun;
}): Promise<RemediationVerification> {
  const { deps, change, suiteRun } = args;
  const at = deps.clock().toISOString();
  const claimed = change.reproduction;
  if (!claimed) {
    const reason = change.noReproductionReason ?? "The agent named no reproducing test and gave no reason.";
    const without = { state: "fixed-without-reproduction" as const, reason, reproduction: null };
    return { ...without, baseRun: null, branchRun: null, suiteRun, verifiedAt: at };
  }
  const goal = await runGoal(args.services, args.run);
  const contents = new Map(change.files.map((f) => [f.path, f.content]));
  let verdict: Awaited<ReturnType<typeof checkOnBase>>;
  try {
    verdict = await checkOnBase({
      services: args.services,
      repo: args.repo,
      baseCommit: args.baseCommit,
      claim: claimed,
      // Paths as the file tools store them: an agent may name `./test/x.test.js`.
      testFiles: new Map(
        claimed.tests.map((t) => {
          const path = checkRelativePath(t);
          return [path, contents.get(path) ?? null];
        }),
      ),
      problem: goal?.kind === "fix" ? goal.problem : {},
    });
  } catch (error) {
    // A path the file tools would refuse, or a test name this runner cannot select.
    if (!isAppError(error)) throw error;
    const reason = `The named reproduction could not be run: ${error.message}`;
    const without = { state: "fixed-without-reproduction" as const, reason, reproduction: null };
    return { ...without, baseRun: null, branchRun: null, suiteRun, verifiedAt: at };
  }
  const command = verdict.run.command;
  const branchRun = recordRun(command, await args.workspace.run(command, AGENT_TEST_LIMITS));
  const reproduction = {
    tests: claimed.tests,
    name: claimed.name ?? null,
    matched: verdict.verdict === "reproduces" ? verdict.matched : null,
    testDiff: diffOf(change.diff, claimed.tests),
  };
  const runs = { baseRun: verdict.run, branchRun, suiteRun, verifiedAt: at };
  if (verdict.verdict !== "reproduces") {
    const reason = change.noReproductionReason
      ? `${verdict.message} The agent's reason: ${change.noReproductionReason}`
      : verdict.message;
    return { state: "fixed-without-reproduction", reason, reproduction, ...runs };
  }
  if (branchRun.exitCode !== 0) {
    const reason = `The reproducing test still fails on the fix branch (\`${command}\` exited ${branchRun.exitCode ?? "killed"}).`;
    return notFixed(deps, change, reason, runs, reproduction);
  }
  return { state: "reproduced-and-fixed", reason: null, reproduction, ...runs };
}

/**
 * `opening-pr`: the change as one commit on `patchbay/<id>`, then the review (a draft pull
 * request, or the local review page). Both host calls are idempotent, so a worker that takes
 * over after a crash between them finds the branch and does not push or open twice.
 */
async function openReviewStep(step: Step): Promise<void> {
  const { deps, services, claim } = step;
  let { run } = step;
  const found = await proposal(step);
  if (!found) return;
  const { repo, baseCommit, change } = found;
  const host = hostFor(services, repo);
  const service = run.service ?? "unknown";
  const instrumenting = run.kind === "instrumentation";
  const title = (
    instrumenting
      ? `feat: OpenTelemetry instrumentation for ${run.service ?? "the service"}`
      : `fix: ${change.summary.split("\n", 1)[0]?.trim() || "remediation"}`
  ).slice(0, 120);
  const goal = instrumenting
    ? `Requested: OpenTelemetry instrumentation for service ${service}`
    : `Problem: ${run.problemId} (service ${service})`;
  if (!run.headCommit || !run.branch) {
    const pushed = await host.pushChange(repo, {
      remediationId: run.id,
      baseCommit,
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
  const review = await host.openReview(repo, {
    remediationId: run.id,
    branch: run.branch ?? "",
    title,
    body: [
      change.summary,
      "",
      goal,
      `Thread: ${threadUrlFor(deps.config.baseUrl, run.id)}`,
      `Tests: \`${repo.testCommand}\` passed in patchbay's sandbox.`,
      "",
      ...(run.verification ? verificationBody(run.verification) : []),
      "patchbay never merges: review and merge this yourself.",
    ].join("\n"),
  });
  await advance(
    deps,
    claim,
    "awaiting-review",
    { prUrl: review.prUrl, prNumber: review.prNumber },
    { type: "review_opened", message: `Review ready: ${review.prUrl}`, data: review },
  );
}

const fence = (text: string) => ["```", text.replaceAll("```", "`\u200b``").trimEnd(), "```"];
const runBlock = (title: string, r: VerificationRun) => [
  `**${title}**: \`${r.command}\` → exit ${r.exitCode ?? "killed"}${r.timedOut ? " (timed out)" : ""}`,
  ...fence(r.output.slice(0, 3_000)),
];

/** The pull request's proof: the verification state, the failing and passing runs, the test's diff. */
function verificationBody(v: RemediationVerification): string[] {
  const lines = [`## Verification: \`${v.state}\``, "", describeVerification(v), ""];
  if (v.baseRun) lines.push(...runBlock("Default branch (base + test only)", v.baseRun), "");
  if (v.branchRun) lines.push(...runBlock("Fix branch", v.branchRun), "");
  if (v.reproduction?.testDiff)
    lines.push(
      "**The reproducing test**",
      "",
      "```diff",
      v.reproduction.testDiff.slice(0, 20_000).trimEnd(),
      "```",
      "",
    );
  return lines;
}
