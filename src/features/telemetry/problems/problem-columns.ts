import { getTableColumns, sql } from "drizzle-orm";
import { problems } from "../../../platform/db/schema/problems.ts";
import { remediations } from "../../../platform/db/schema/remediations.ts";
import type { Problem, ProblemSummary } from "./schemas.ts";
import { parseStack } from "./stack-frames.ts";

/**
 * Which remediation a problem shows: the latest run started for it in its environment. Read
 * with the problem (one index probe on `remediations_problem_idx`), never copied onto it, so
 * the problem can never disagree with the run.
 */
// drizzle leaves columns unqualified in single-table queries, where `id` inside the subquery
// would mean the run's own id; the problem's columns are qualified by hand.
const problem = (column: string) => sql`${sql.identifier("problems")}.${sql.identifier(column)}`;
const latestRun = (column: "id" | "status") =>
  sql<string | null>`(select r.${sql.identifier(column)} from ${remediations} r
    where r.environment_id = ${problem("environment_id")} and r.problem_id = ${problem("id")}
    order by r.created_at desc, r.id desc limit 1)`;

/** A problem row with its latest remediation's id and status. */
export const problemColumns = {
  ...getTableColumns(problems),
  remediationId: latestRun("id"),
  remediationState: latestRun("status"),
};

/**
 * What a list shows of each problem (`toProblemSummary`): not the samples and the stack trace,
 * which a page of 50 would otherwise read and throw away.
 */
export const problemSummaryColumns = {
  id: problems.id,
  fingerprint: problems.fingerprint,
  title: problems.title,
  culprit: problems.culprit,
  serviceName: problems.serviceName,
  exceptionType: problems.exceptionType,
  status: problems.status,
  count: problems.count,
  firstSeen: problems.firstSeen,
  lastSeen: problems.lastSeen,
  revision: problems.revision,
  remediationId: problemColumns.remediationId,
  remediationState: problemColumns.remediationState,
};

/** A problem with its latest remediation (`problemColumns`). */
type ProblemRow = typeof problems.$inferSelect & {
  remediationId: string | null;
  remediationState: string | null;
};

type ProblemSummaryRow = Pick<ProblemRow, keyof typeof problemSummaryColumns>;

/** Frames shown with a problem: plenty to read, bounded for pathological stacks. */
const MAX_FRAMES = 50;

export const toProblemSummary = (row: ProblemSummaryRow): ProblemSummary => ({
  id: row.id,
  fingerprint: row.fingerprint,
  title: row.title,
  culprit: row.culprit,
  service: row.serviceName,
  exceptionType: row.exceptionType,
  status: row.status,
  count: row.count,
  firstSeen: row.firstSeen.toISOString(),
  lastSeen: row.lastSeen.toISOString(),
  revision: row.revision,
  remediationId: row.remediationId,
  remediationState: row.remediationState,
});

export const toProblem = (row: ProblemRow): Problem => ({
  ...toProblemSummary(row),
  sampleTraceIds: row.sampleTraceIds,
  sampleMessage: row.sampleMessage,
  stackTrace: row.sampleStacktrace,
  logCount: row.logCount,
  sampleLogMessage: row.sampleLogMessage,
  frames: row.sampleStacktrace ? parseStack(row.sampleStacktrace).slice(0, MAX_FRAMES) : [],
  resolvedAt: row.resolvedAt?.toISOString() ?? null,
  statusChangedAt: row.statusChangedAt?.toISOString() ?? null,
});
