import { and, desc, eq, type SQL, sql } from "drizzle-orm";
import { requirePermission } from "../../../context.ts";
import { type Db, perDatabaseShape } from "../../../platform/db/client.ts";
import { problems } from "../../../platform/db/schema/problems.ts";
import { callerEnvironment } from "../../environments/index.ts";
import type { EnvironmentRead } from "../queries/schemas.ts";
import { decodeCursor, encodeCursor } from "../queries/telemetry-cursor.ts";
import { problemSummaryColumns, toProblemSummary } from "./problem-columns.ts";
import type { ProblemListQueryInput, ProblemPage } from "./schemas.ts";

type Shape = { status: boolean; service: boolean; cursor: boolean };
type SummaryRow = Parameters<typeof toProblemSummary>[0];
type PageStatement = { execute(params: Record<string, unknown>): Promise<SummaryRow[]> };

const p = (name: string) => sql.placeholder(name);

/**
 * The page query of one shape (which filters, first page or after a cursor), prepared once per
 * database handle: building drizzle's SQL per request was most of a list's CPU
 * (docs/performance.md, "REST API").
 */
function buildPageQuery(db: Db, shape: Shape, name: string): PageStatement {
  const conditions: (SQL | undefined)[] = [
    eq(problems.environmentId, p("environmentId")),
    shape.status ? eq(problems.status, p("status")) : undefined,
    shape.service ? eq(problems.serviceName, p("service")) : undefined,
    shape.cursor
      ? sql`(${problems.lastSeen}, ${problems.id}) < (${p("beforeTime")}::timestamptz, ${p("beforeId")})`
      : undefined,
  ];
  return db
    .select(problemSummaryColumns)
    .from(problems)
    .where(and(...conditions))
    .orderBy(desc(problems.lastSeen), desc(problems.id))
    .limit(p("limit"))
    .prepare(name) as unknown as PageStatement;
}

const pageStatement = perDatabaseShape<PageStatement>();

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
  const shape: Shape = {
    status: Boolean(input.status),
    service: Boolean(input.service),
    cursor: before !== undefined,
  };
  const key = `${+shape.status}${+shape.service}${+shape.cursor}`;
  const statement = pageStatement(ctx.deps.db, key, () =>
    buildPageQuery(ctx.deps.db, shape, `problems_page_${key}`),
  );
  const rows = await statement.execute({
    environmentId,
    limit: input.pageSize + 1,
    ...(input.status ? { status: input.status } : {}),
    ...(input.service ? { service: input.service } : {}),
    ...(before ? { beforeTime: before.time.toISOString(), beforeId: before.id } : {}),
  });
  const page = rows.slice(0, input.pageSize);
  const last = page.at(-1);
  return {
    items: page.map(toProblemSummary),
    nextCursor:
      rows.length > input.pageSize && last ? encodeCursor([last.lastSeen.toISOString(), last.id]) : null,
  };
}
