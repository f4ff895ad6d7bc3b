import { and, desc, eq } from "drizzle-orm";
import { problems } from "../../db/schema/problems.ts";
import { remediations } from "../../db/schema/remediations.ts";
import type { Deps } from "../../deps.ts";
import { stateDigest } from "../agent-onboarding/assumed-state.ts";
import type { AssumptionKind } from "../agent-onboarding/onboarding-assumption.ts";
import { formatUsd } from "../x402/prices.ts";

/** Subject of "remediate this problem": `problem:<problem id>`. */
export const problemSubject = (problemId: string) => `problem:${problemId}`;

async function facts(deps: Pick<Deps, "db">, problemId: string) {
  const [problem] = await deps.db
    .select({ status: problems.status, environmentId: problems.environmentId })
    .from(problems)
    .where(eq(problems.id, problemId));
  if (!problem) return undefined;
  const [latest] = await deps.db
    .select({ id: remediations.id, status: remediations.status })
    .from(remediations)
    .where(and(eq(remediations.environmentId, problem.environmentId), eq(remediations.problemId, problemId)))
    .orderBy(desc(remediations.createdAt))
    .limit(1);
  return { problem, latest };
}

/** The facts a remediation suggestion rests on: the problem's status and its latest run. */
export async function problemDigest(deps: Pick<Deps, "db">, problemId: string): Promise<string | undefined> {
  const f = await facts(deps, problemId);
  return f ? stateDigest([f.problem.status, f.latest?.id ?? null, f.latest?.status ?? null]) : undefined;
}

export const problemAssumption: AssumptionKind = {
  digest: problemDigest,
  async nextActions(deps, problemId) {
    const f = await facts(deps, problemId);
    if (!f) return [];
    const base = deps.config.baseUrl;
    if (f.latest) {
      return [
        {
          action: "poll_remediation",
          method: "GET",
          href: `${base}/x402/remediations/${f.latest.id}`,
          price: "free",
          description: `A remediation of this problem exists (${f.latest.status}); poll it with Authorization: Bearer <session token>.`,
        },
      ];
    }
    return [
      {
        action: "inspect_problem",
        method: "GET",
        href: `${base}/x402/problems/${problemId}?environmentId=${f.problem.environmentId}`,
        price: formatUsd(deps.payments.prices.read),
        description: `The problem is now ${f.problem.status}: look at it again before remediating.`,
      },
    ];
  },
};
