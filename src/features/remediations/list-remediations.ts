import { requirePermission, type ServiceContext } from "../../context.ts";
import { readPage } from "../../platform/db/pagination.ts";
import { type RemediationStatus, remediations } from "../../platform/db/schema/remediations.ts";
import { findEnvironment } from "../environments/index.ts";
import type { EvidenceProblem } from "./evidence.ts";
import type { RemediationSummary } from "./schemas.ts";
import { toRemediationSummary } from "./to-remediation.ts";

/** The environment's runs, oldest first, optionally of one problem or status (no events). */
export async function listRemediations(args: {
  ctx: ServiceContext;
  input: {
    environmentId: string;
    pageSize: number;
    cursor?: string | undefined;
    problemId?: string | undefined;
    status?: RemediationStatus | undefined;
  };
}): Promise<{ items: RemediationSummary[]; nextCursor: string | null }> {
  const { ctx, input } = args;
  requirePermission(ctx, "remediations:read");
  const db = ctx.deps.db;
  const env = await findEnvironment(db, ctx, input.environmentId);
  const scope = {
    environmentId: env.id,
    ...(input.problemId ? { problemId: input.problemId } : {}),
    ...(input.status ? { status: input.status } : {}),
  };
  return readPage(db, remediations, scope, input, (row) =>
    toRemediationSummary(ctx.deps.config.baseUrl, row),
  );
}

/** At most this many problems per call (a page of runs). */
const MAX_PROBLEMS = 200;

/**
 * The problems runs were started for, as the run itself sees them (its evidence store), keyed
 * by id; a problem that no longer exists is absent. For pages that list runs by problem title.
 */
export async function describeRemediationProblems(args: {
  ctx: ServiceContext;
  input: { environmentId: string; problemIds: readonly string[] };
}): Promise<Map<string, Pick<EvidenceProblem, "id" | "title" | "service" | "status">>> {
  const { ctx, input } = args;
  requirePermission(ctx, "remediations:read");
  const env = await findEnvironment(ctx.deps.db, ctx, input.environmentId);
  const scope = { organizationId: ctx.actor.organizationId, environmentId: env.id };
  const ids = [...new Set(input.problemIds)].slice(0, MAX_PROBLEMS);
  const found = await Promise.all(ids.map((id) => ctx.deps.remediation.evidence.getProblem(scope, id)));
  return new Map(
    found.flatMap((p) =>
      p ? [[p.id, { id: p.id, title: p.title, service: p.service, status: p.status }]] : [],
    ),
  );
}
