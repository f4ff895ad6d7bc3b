import { eq } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import { problems } from "../../platform/db/schema/problems.ts";
import { startRefusal } from "../remediations/index.ts";
import { problemColumns } from "../telemetry/index.ts";
import { type AssumptionKind, assumeState, stateDigest } from "./assumed-state.ts";
import { FREE_READ_HOW, type NextAction, nextAction } from "./schemas.ts";

/** What a remediation suggestion rests on: the problem's status and its latest run. */
export type ProblemState = {
  id: string;
  status: string;
  remediationId: string | null;
  remediationState: string | null;
};

const digestOf = (p: ProblemState) => stateDigest([p.status, p.remediationId, p.remediationState]);

async function facts(deps: Pick<Deps, "db">, problemId: string) {
  const [problem] = await deps.db
    .select({
      id: problems.id,
      status: problems.status,
      environmentId: problems.environmentId,
      remediationId: problemColumns.remediationId,
      remediationState: problemColumns.remediationState,
    })
    .from(problems)
    .where(eq(problems.id, problemId));
  return problem;
}

/** `x_assumed_state` for a suggestion about a problem as the caller just read it. */
export const assumeProblem = (deps: Pick<Deps, "keyring" | "clock">, problem: ProblemState) =>
  assumeState(deps.keyring, { subject: `problem:${problem.id}`, digest: digestOf(problem) }, deps.clock());

/** Free polling of a remediation: with the onboarding session token, or the paying wallet signed in. */
export const pollRemediationAction = (
  deps: Pick<Deps, "config" | "payments">,
  id: string,
  description: string,
) => nextAction(deps, `GET /x402/remediations/${id}`, "free", { action: "poll_remediation", description });

/**
 * "remediate": start a run for the problem, refused for free if the problem moved on meanwhile.
 * None while this server cannot start a run (no model, no sandbox): it would only answer 503.
 */
export function remediateAction(
  deps: Pick<Deps, "keyring" | "clock" | "config" | "payments" | "languageModel" | "remediation">,
  problem: ProblemState,
  environmentId: string,
  description: string,
): NextAction | undefined {
  if (startRefusal(deps)) return undefined;
  return nextAction(deps, `POST /x402/problems/${problem.id}/remediations`, "remediation", {
    action: "remediate",
    description,
    body: { environmentId },
    x_assumed_state: assumeProblem(deps, problem),
  });
}

export const problemAssumption: AssumptionKind = {
  async digest(deps, problemId) {
    const problem = await facts(deps, problemId);
    return problem && digestOf(problem);
  },
  async nextActions(deps, problemId) {
    const f = await facts(deps, problemId);
    if (!f) return [];
    if (f.remediationId) {
      return [
        pollRemediationAction(
          deps,
          f.remediationId,
          `A remediation of this problem exists (${f.remediationState}); poll it for free ${FREE_READ_HOW}.`,
        ),
      ];
    }
    return [
      nextAction(deps, `GET /x402/problems/${problemId}?environmentId=${f.environmentId}`, "read", {
        action: "inspect_problem",
        description: `The problem is now ${f.status}: look at it again before remediating.`,
      }),
    ];
  },
};
