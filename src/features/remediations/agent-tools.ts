import { type Tool, tool } from "ai";
import { z } from "zod";
import { isAppError } from "../../errors.ts";
import type { Workspace } from "../../platform/sandbox/sandbox.ts";
import type { EvidenceScope, RemediationEvidence } from "./evidence.ts";
import type { RunGoal } from "./run-goal.ts";

/** The tail of test output the agent sees. */
const TEST_TAIL_CHARS = 4_000;

/** Time and CPU caps for one `run_tests` from the agent. */
export const AGENT_TEST_LIMITS = { timeoutMs: 3 * 60 * 1000, cpuSeconds: 3 * 60 };

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
}): Record<string, Tool> {
  const { evidence, scope, workspace } = args;
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
      description: "Run the repository's test command in the sandbox: exit code and the tail of its output.",
      inputSchema: z.object({}).strict(),
      execute: guarded(async () => {
        const result = await workspace.run(args.testCommand, AGENT_TEST_LIMITS);
        return {
          exitCode: result.exitCode,
          timedOut: result.timedOut,
          outputTail: result.outputTail.slice(-TEST_TAIL_CHARS),
        };
      }),
    }),
    finish: tool({
      description: "End your work with a summary of the cause and of the fix you wrote.",
      inputSchema: z.object({ summary: z.string().min(1).max(8_000) }).strict(),
      // The runtime ends the run and reads the summary from the committed call.
      execute: async () => ({ outcome: "ok" }),
    }),
  };
}
