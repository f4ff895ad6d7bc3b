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
