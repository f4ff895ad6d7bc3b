import { and, desc, eq, sql } from "drizzle-orm";
import { requirePermission } from "../../../context.ts";
import { problems } from "../../../platform/db/schema/problems.ts";
import { callerEnvironment } from "../../environments/index.ts";
import type { EnvironmentRead } from "../queries/schemas.ts";
import { decodeCursor, encodeCursor } from "../queries/telemetry-cursor.ts";
import { problemColumns, toProblemSummary } from "./problem-columns.ts";
import type { ProblemListQueryInput, ProblemPage } from "./schemas.ts";

/**
 * An environment's problems, most recently seen first, optionally of one status or service. The
 * cursor is the last item's (last seen, id): a problem that recurs while someone pages moves to
 * the front, so it may be missed by that walk — the next first page has it.
 */
export async function listProblems({
  ctx,
  input,
}: EnvironmentRead<ProblemListQueryInput>): Promise<ProblemPage> {
  requirePermission(ctx, "telemetry:read");
  const environmentId = await callerEnvironment(ctx, input.environmentId);
  const before = decodeCursor(input.cursor, ([time, id]) => {
    const ms = typeof time === "string" ? Date.parse(time) : Number.NaN;
    return Number.isFinite(ms) && typeof id === "string" ? { time: new Date(ms), id } : undefined;
  });
  const rows = await ctx.deps.db
    .select(problemColumns)
    .from(problems)
    .where(
      and(
        eq(problems.environmentId, environmentId),
        input.status ? eq(problems.status, input.status) : undefined,
        input.service ? eq(problems.serviceName, input.service) : undefined,
        before
          ? sql`(${problems.lastSeen}, ${problems.id}) < (${sql.param(before.time, problems.lastSeen)}, ${before.id})`
          : undefined,
      ),
    )
    .orderBy(desc(problems.lastSeen), desc(problems.id))
    .limit(input.pageSize + 1);
  const page = rows.slice(0, input.pageSize);
  const last = page.at(-1);
  return {
    items: page.map(toProblemSummary),
    nextCursor:
      rows.length > input.pageSize && last ? encodeCursor([last.lastSeen.toISOString(), last.id]) : null,
  };
}
