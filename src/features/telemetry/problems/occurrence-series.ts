import { sql } from "drizzle-orm";
import { requirePermission } from "../../../context.ts";
import { rowsOf } from "../../../platform/db/result-rows.ts";
import { callerEnvironment } from "../../environments/index.ts";
import type { EnvironmentRead } from "../queries/schemas.ts";
import { getProblem } from "./get-problem.ts";

export type OccurrenceSeries = {
  firstSeen: string;
  lastSeen: string;
  /** The chart's span: from the first occurrence to now (at least an hour). */
  from: string;
  to: string;
  bucketSeconds: number;
  /** Occurrences recorded from spans per bucket (start, ISO 8601); empty buckets are absent. */
  buckets: { start: string; count: number }[];
};

const BUCKETS = 40;

/**
 * A problem's occurrences over time, from its first occurrence to now: the failing spans grouped
 * to it (problem_spans), counted per `date_bin` bucket in one statement. Error logs grouped on
 * their own are in the problem's count but not here (they have no span).
 */
export async function getOccurrenceSeries({
  ctx,
  input,
}: EnvironmentRead<{ problemId: string }>): Promise<OccurrenceSeries> {
  requirePermission(ctx, "telemetry:read");
  const environmentId = await callerEnvironment(ctx, input.environmentId);
  const problem = await getProblem({ ctx, input: { environmentId, problemId: input.problemId } });
  const now = ctx.deps.clock().getTime();
  const first = Date.parse(problem.firstSeen);
  const to = Math.max(now, Date.parse(problem.lastSeen) + 1);
  const from = Math.min(first, to - 3_600_000);
  const bucketSeconds = Math.max(1, Math.ceil((to - from) / BUCKETS / 1000));
  const fromIso = new Date(from).toISOString();
  const result = await ctx.deps.db.execute(sql`
    select to_char(date_bin(${`${bucketSeconds} seconds`}::interval, recorded_at, ${fromIso}::timestamptz)
                   at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as bucket,
           count(*)::float8 as count
      from problem_spans
     where environment_id = ${environmentId} and fingerprint = ${problem.fingerprint}
       and recorded_at >= ${fromIso}::timestamptz
     group by 1
     order by 1`);
  return {
    firstSeen: problem.firstSeen,
    lastSeen: problem.lastSeen,
    from: fromIso,
    to: new Date(to).toISOString(),
    bucketSeconds,
    buckets: rowsOf(result).map((row) => ({ start: String(row.bucket), count: Number(row.count) })),
  };
}
