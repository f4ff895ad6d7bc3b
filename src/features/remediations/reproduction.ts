import type { ReproductionClaim, VerificationRun } from "../../platform/db/schema/remediations.ts";
import type { Workspace } from "../../platform/sandbox/sandbox.ts";
import { checkRelativePath } from "../../platform/sandbox/workspace-paths.ts";
import type { RepositoryRow } from "../repositories/index.ts";
import { hostFor, type RemediationServices } from "./services.ts";
import {
  AGENT_TEST_LIMITS,
  detectTestRunner,
  matchProblem,
  type ProblemSignature,
  recordRun,
  type TestRunner,
} from "./test-runner.ts";

export type ReproductionVerdict =
  | { verdict: "reproduces"; matched: string; run: VerificationRun }
  | { verdict: "passes_on_base" | "fails_differently"; run: VerificationRun; message: string };

/** The runner of a working copy: the test command, and package.json's `test` script behind `npm test`. */
export async function runnerFor(workspace: Workspace, testCommand: string): Promise<TestRunner> {
  let script: string | undefined;
  if (/^(npm|pnpm|yarn)( run)? test\b/.test(testCommand.trim())) {
    try {
      const manifest = JSON.parse(await workspace.readFile("package.json")) as {
        scripts?: { test?: unknown };
      };
      if (typeof manifest.scripts?.test === "string") script = manifest.scripts.test;
    } catch {
      // No readable package.json: the command is taken as it is.
    }
  }
  return detectTestRunner(testCommand, script);
}

/**
 * Runs the claimed reproduction on the default branch as it is — a fresh working copy of the base
 * commit plus ONLY the test files — and judges it: a reproduction fails there, with a failure that
 * shows the problem (its message, or its exception and culprit frame). `testFiles` gives each
 * claimed file's content as the change has it (null: the base's own file).
 */
export async function checkOnBase(args: {
  services: RemediationServices;
  repo: RepositoryRow;
  baseCommit: string;
  claim: ReproductionClaim;
  testFiles: Map<string, string | null>;
  problem: ProblemSignature;
}): Promise<ReproductionVerdict> {
  const { services, repo, claim } = args;
  const workspace = await services.sandbox.createWorkspace(
    await hostFor(services, repo).archive(repo, args.baseCommit),
  );
  try {
    for (const path of claim.tests) {
      const content = args.testFiles.get(checkRelativePath(path));
      if (content != null) await workspace.writeFile(path, content);
    }
    const command = (await runnerFor(workspace, repo.testCommand)).target(claim.tests, claim.name);
    const run = recordRun(command, await workspace.run(command, AGENT_TEST_LIMITS));
    if (run.exitCode === 0) {
      return {
        verdict: "passes_on_base",
        run,
        message: `Refused as a reproduction: \`${command}\` passes on the default branch (exit 0), so it does not show the problem.`,
      };
    }
    const matched = matchProblem(run.output, args.problem);
    if (!matched) {
      return {
        verdict: "fails_differently",
        run,
        message: `Refused as a reproduction: \`${command}\` fails on the default branch (exit ${run.exitCode ?? "killed"}), but not with the problem (neither its message, nor its exception with the culprit frame, appears in the failure).`,
      };
    }
    return { verdict: "reproduces", matched, run };
  } finally {
    await workspace.dispose();
  }
}

/** The sections of a unified diff that touch `paths`. */
export function diffOf(diff: string, paths: string[]): string {
  const wanted = new Set(paths.map((p) => checkRelativePath(p)));
  return diff
    .split(/^(?=diff --git )/m)
    .filter((section) => {
      const header = /^diff --git a\/(\S+) b\//.exec(section);
      return header?.[1] !== undefined && wanted.has(header[1]);
    })
    .join("");
}
