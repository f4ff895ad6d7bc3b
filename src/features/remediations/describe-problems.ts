import { requirePermission, type ServiceContext } from "../../context.ts";
import { findEnvironment } from "../environments/find-environment.ts";
import type { EvidenceProblem } from "./evidence.ts";

/** At most this many problems per call (a page of runs). */
const MAX_PROBLEMS = 200;

export type ProblemBrief = Pick<EvidenceProblem, "id" | "title" | "service" | "status">;

/**
 * The problems runs were started for, as the run itself sees them (its evidence store), keyed
 * by id; a problem that no longer exists is absent. For pages that list runs by problem title.
 */
export async function describeRemediationProblems(args: {
  ctx: ServiceContext;
  input: { environmentId: string; problemIds: readonly string[] };
}): Promise<Map<string, ProblemBrief>> {
  const { ctx, input } = args;
  requirePermission(ctx, "remediations:read");
  const env = await findEnvironment(ctx.deps.db, ctx, input.environmentId);
  const scope = { organizationId: ctx.actor.organizationId, environmentId: env.id };
  const { evidence } = ctx.deps.remediation;
  const ids = [...new Set(input.problemIds)].slice(0, MAX_PROBLEMS);
  const found = await Promise.all(ids.map((id) => evidence.getProblem(scope, id)));
  const out = new Map<string, ProblemBrief>();
  for (const p of found) {
    if (p) out.set(p.id, { id: p.id, title: p.title, service: p.service, status: p.status });
  }
  return out;
}
