import type { EvidenceProblem } from "./evidence.ts";
import type { RemediationRow } from "./run-state.ts";
import type { RemediationServices } from "./services.ts";

/** What a run works toward, read fresh at each step. */
export type RunGoal =
  | { kind: "fix"; service: string; problem: EvidenceProblem }
  | { kind: "instrumentation"; service: string };

/**
 * The run's goal: the problem it fixes (still present in the environment), or the service to
 * instrument. Undefined when a fix's problem is gone (retention, or another environment's id).
 */
export async function runGoal(
  services: RemediationServices,
  run: RemediationRow,
): Promise<RunGoal | undefined> {
  if (run.kind === "instrumentation") {
    return run.service ? { kind: "instrumentation", service: run.service } : undefined;
  }
  if (!run.problemId) return undefined;
  const scope = { organizationId: run.organizationId, environmentId: run.environmentId };
  const problem = await services.evidence.getProblem(scope, run.problemId);
  return problem ? { kind: "fix", service: problem.service, problem } : undefined;
}

/** One line naming the goal, for events, commits and pull requests. */
export const goalTitle = (goal: RunGoal) =>
  goal.kind === "fix" ? goal.problem.title : `OpenTelemetry instrumentation for ${goal.service}`;

/** Why a run has no goal any more. */
export const goalMissing = (run: RemediationRow) =>
  run.kind === "instrumentation"
    ? { code: "service_missing", reason: `Run ${run.id} names no service to instrument.` }
    : { code: "problem_not_found", reason: `Problem ${run.problemId} no longer exists in this environment.` };

const REMEDIATION_SYSTEM = [
  "You are patchbay's remediation agent. You fix one production problem in one repository.",
  "Investigate first: get_problem, then the sample traces (get_trace) and logs (search_logs), then the code (list_files, search_files, read_file).",
  "Reproduce before fixing: write a new test file (or find an existing test) that fails the way the problem does — the same exception and message, or the same culprit frame. run_tests with `file` or `name` runs just that test and tells you how this repository's runner reports failures. Then call check_reproduction: patchbay runs the test on the default branch plus only your test files, and refuses a test that passes there or fails for another reason; write a better one if refused.",
  "Then fix the cause with the smallest change (write_file with the whole new file), and run_tests until the reproduction and the whole suite pass. Do not weaken, skip or delete tests; prefer a new test file over editing an existing one.",
  "Customer tools, when offered, are read-only sources of information approved by the organisation.",
  "When the tests pass, call finish with a summary of the cause and the fix and `reproduction` naming your reproducing test(s); if no reproducing test can be written, say why in `noReproductionReason`. If you cannot fix it, call finish and say why without writing files.",
].join("\n");

const INSTRUMENTATION_SYSTEM = [
  "You are patchbay's instrumentation agent. You add OpenTelemetry to one service in one repository so it sends traces and logs to patchbay.",
  "Read the repository first (list_files, read_file, search_files): its language, entry point, framework and test setup. get_problem tells you the service and where telemetry goes.",
  "Add the official OpenTelemetry SDK for the language with OTLP/HTTP exporters configured only from the standard environment variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME); never write a key or secret into the repository. Load it before the application (e.g. a separate instrumentation module), add the dependencies to the manifest, and document the variables in the README.",
  "Keep the change small and do not alter behaviour; run_tests must still pass (the sandbox has no network, so do not rely on installing packages to pass tests).",
  "When the tests pass, call finish with a summary of what you added and how to enable it. If you cannot, call finish and say why without writing files.",
].join("\n");

export const systemPromptFor = (goal: RunGoal) =>
  goal.kind === "fix" ? REMEDIATION_SYSTEM : INSTRUMENTATION_SYSTEM;

/** The first message of a run: its goal and where to work. */
export function goalPrompt(goal: RunGoal, repository: string): string {
  if (goal.kind === "fix") return remediationPrompt(goal.problem, repository);
  return [
    `Add OpenTelemetry instrumentation to service "${goal.service}" so its traces and logs reach patchbay.`,
    `Repository: ${repository}. The service name to report is "${goal.service}"; the endpoint and publishable key come from OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_HEADERS at run time.`,
  ].join("\n");
}

/** The first message of a fix: what the problem is and where to look. */
function remediationPrompt(problem: EvidenceProblem, repository: string): string {
  return [
    `Problem ${problem.id} in service "${problem.service}": ${problem.title}`,
    problem.culprit ? `Culprit: ${problem.culprit}` : undefined,
    problem.sampleTraceIds.length
      ? `Sample trace ids: ${problem.sampleTraceIds.slice(0, 5).join(", ")}`
      : undefined,
    `Repository: ${repository}. Find the cause, fix it, and make the repository's tests pass.`,
  ]
    .filter(Boolean)
    .join("\n");
}
