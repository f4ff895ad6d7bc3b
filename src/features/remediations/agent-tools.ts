import { type Tool, tool } from "ai";
import { z } from "zod";
import { isAppError } from "../../errors.ts";
import type { ReproductionClaim } from "../../platform/db/schema/remediations.ts";
import type { Workspace } from "../../platform/sandbox/sandbox.ts";
import type { EvidenceScope, RemediationEvidence } from "./evidence.ts";
import { type ReproductionVerdict, runnerFor } from "./reproduction.ts";
import type { RunGoal } from "./run-goal.ts";
import { AGENT_TEST_LIMITS, OUTPUT_TAIL_CHARS, relevantLines, type TestRunner } from "./test-runner.ts";

/**
 * The built-in tools of a remediation agent. Names and arguments are fixed (issue 9) so a run's
 * transcript can be replayed: the same calls against the same base give the same answers.
 * A tool that refuses (bad path, missing file) answers `{ outcome: "error", error, message }`
 * instead of throwing, so the model can correct itself.
 */
export function remediationTools(args: {
  evidence: RemediationEvidence;
  scope: EvidenceScope;
  goal: RunGoal;
  workspace: Workspace;
  testCommand: string;
  onWrite: (path: string) => Promise<void>;
  /** Runs a claimed reproduction on the default branch plus only its test files (`reproduction.ts`). */
  checkReproduction: (claim: ReproductionClaim) => Promise<ReproductionVerdict>;
}): Record<string, Tool> {
  const { evidence, scope, workspace } = args;
  let runner: TestRunner | undefined;
  const testRunner = async () => {
    runner ??= await runnerFor(workspace, args.testCommand);
    return runner;
  };
  const guarded =
    <I>(fn: (input: I) => Promise<Record<string, unknown>>) =>
    async (input: I) => {
      try {
        return { outcome: "ok", ...(await fn(input)) };
      } catch (error) {
        if (isAppError(error)) return { outcome: "error", error: error.code, message: error.message };
        throw error;
      }
    };
  return {
    get_problem: tool({
      description:
        "The problem this run is about: title, service, stack trace, sample trace ids (null for an instrumentation run, which says its service and objective instead).",
      inputSchema: z.object({}).strict(),
      execute: guarded(async () =>
        args.goal.kind === "fix"
          ? { problem: (await evidence.getProblem(scope, args.goal.problem.id)) ?? null }
          : {
              problem: null,
              objective: `Add OpenTelemetry instrumentation to service "${args.goal.service}".`,
              service: args.goal.service,
              telemetry: {
                protocol: "OTLP/HTTP (protobuf or JSON): traces at /v1/traces, logs at /v1/logs",
                environment: [
                  "OTEL_EXPORTER_OTLP_ENDPOINT",
                  "OTEL_EXPORTER_OTLP_HEADERS",
                  "OTEL_SERVICE_NAME",
                ],
              },
            },
      ),
    }),
    search_logs: tool({
      description:
        "Search the environment's recent log records for a text (case-insensitive). Newest first, at most 50.",
      inputSchema: z.object({ query: z.string().min(1).max(200) }).strict(),
      execute: guarded(async ({ query }) => ({
        records: await evidence.searchLogs(scope, { query, limit: 50 }),
      })),
    }),
    get_trace: tool({
      description: "One trace with its spans, by trace id (e.g. a sample trace id of the problem).",
      inputSchema: z.object({ traceId: z.string().min(1).max(64) }).strict(),
      execute: guarded(async ({ traceId }) => ({ trace: (await evidence.getTrace(scope, traceId)) ?? null })),
    }),
    list_files: tool({
      description: "List a directory of the repository (default: its root).",
      inputSchema: z.object({ path: z.string().max(1_000).optional() }).strict(),
      execute: guarded(async ({ path }) => ({ entries: await workspace.listFiles(path ?? "") })),
    }),
    read_file: tool({
      description: "Read a file of the repository (UTF-8, at most 256 KiB shown).",
      inputSchema: z.object({ path: z.string().min(1).max(1_000) }).strict(),
      execute: guarded(async ({ path }) => ({ path, content: await workspace.readFile(path) })),
    }),
    search_files: tool({
      description: "Find a literal text in the repository's files: path, line number and line.",
      inputSchema: z.object({ query: z.string().min(1).max(200) }).strict(),
      execute: guarded(async ({ query }) => ({ hits: await workspace.searchFiles(query) })),
    }),
    write_file: tool({
      description: "Create or replace a file of the repository with the full new content.",
      inputSchema: z
        .object({ path: z.string().min(1).max(1_000), content: z.string().max(256 * 1024) })
        .strict(),
      execute: guarded(async ({ path, content }) => {
        await workspace.writeFile(path, content);
        await args.onWrite(path);
        return { path, bytes: Buffer.byteLength(content) };
      }),
    }),
    run_tests: tool({
      description:
        "Run tests in the sandbox: the repository's whole test command, or only one test file (`file`) and/or the tests whose name matches `name`. Answers the command, the exit code (0: passed), the lines that say what failed, the tail of the output, and how this repository's test runner reports a failure.",
      inputSchema: z
        .object({
          file: z.string().min(1).max(1_000).optional(),
          name: z.string().min(1).max(200).optional(),
        })
        .strict(),
      execute: guarded(async ({ file, name }) => {
        const found = await testRunner();
        const command = file || name ? found.target(file ? [file] : [], name) : args.testCommand;
        const result = await workspace.run(command, AGENT_TEST_LIMITS);
        return {
          command,
          exitCode: result.exitCode,
          timedOut: result.timedOut,
          passed: result.exitCode === 0,
          ...(result.exitCode === 0 ? {} : { failure: relevantLines(result.outputTail) }),
          outputTail: result.outputTail.slice(-OUTPUT_TAIL_CHARS),
          runner: { name: found.name, failureFormat: found.failureFormat },
        };
      }),
    }),
    check_reproduction: tool({
      description:
        "Check that test file(s) you wrote (or found) reproduce the problem: patchbay runs them on the default branch as it is (the base commit plus ONLY these test files, your other changes left out). A reproduction must fail there with the problem's failure (its message, or its exception and culprit frame); one that passes, or fails for another reason, is refused. Name the same tests in `finish`.",
      inputSchema: z
        .object({
          tests: z.array(z.string().min(1).max(1_000)).min(1).max(10),
          name: z.string().min(1).max(200).optional(),
        })
        .strict(),
      execute: guarded(async ({ tests, name }) => {
        const verdict = await args.checkReproduction({ tests, name });
        if (verdict.verdict === "reproduces") {
          return {
            reproduces: true,
            matched: verdict.matched,
            onDefaultBranch: verdict.run,
            message: `Reproduces the problem on the default branch (${verdict.matched}). Fix the code so it passes, keep the whole suite passing, and name these tests in finish.`,
          };
        }
        return {
          outcome: "error",
          error: "reproduction_refused",
          reproduces: false,
          verdict: verdict.verdict,
          message: verdict.message,
          onDefaultBranch: verdict.run,
        };
      }),
    }),
    finish: tool({
      description:
        "End your work with a summary of the cause and of the fix. Name the test(s) that reproduce the problem in `reproduction` (checked first with check_reproduction); if you could not write one, give the reason in `noReproductionReason`.",
      inputSchema: z
        .object({
          summary: z.string().min(1).max(8_000),
          reproduction: z
            .object({
              tests: z.array(z.string().min(1).max(1_000)).min(1).max(10),
              name: z.string().min(1).max(200).optional(),
            })
            .strict()
            .optional(),
          noReproductionReason: z.string().min(1).max(2_000).optional(),
        })
        .strict(),
      // The runtime ends the run and reads the summary from the committed call.
      execute: async () => ({ outcome: "ok" }),
    }),
  };
}
