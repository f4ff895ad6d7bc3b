import { and, asc, eq } from "drizzle-orm";
import { requirePermission, type ServiceContext } from "../../context.ts";
import { afterCursor, decodeCursor, toPage } from "../../platform/db/pagination.ts";
import { type RemediationStatus, remediations } from "../../platform/db/schema/remediations.ts";
import { findEnvironment } from "../environments/find-environment.ts";
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
  const rows = await db
    .select()
    .from(remediations)
    .where(
      and(
        eq(remediations.environmentId, env.id),
        input.problemId ? eq(remediations.problemId, input.problemId) : undefined,
        input.status ? eq(remediations.status, input.status) : undefined,
        afterCursor(remediations.createdAt, remediations.id, decodeCursor(input.cursor)),
      ),
    )
    .orderBy(asc(remediations.createdAt), asc(remediations.id))
    .limit(input.pageSize + 1);
  return toPage(rows, input.pageSize, (row) => toRemediationSummary(ctx.deps.config.baseUrl, row));
}
