import type { SqlRunner } from "../storage/sql-runner.ts";
import type { TelemetryTenant } from "../telemetry-records.ts";
import type { ProblemOccurrence } from "./fingerprint.ts";
import { aggregateOccurrences, type LinkedLog } from "./group-occurrences.ts";
import { upsertProblems } from "./upsert-problems.ts";

/**
 * How long an error log of a span with no known problem waits for the span's exception: logs and
 * traces arrive in separate requests, and a span is exported after it ends (batched for up to 5 s
 * by the SDKs' default), so its log usually comes first.
 */
export const DEFERRED_LOG_WAIT_MS = 60_000;

/**
 * Adds a batch's exception occurrences to the environment's problems, inside the batch's
 * transaction. A span's exception is an occurrence, and the span is remembered as failing with
 * that problem (`problem_spans`). An error log of a span remembered so is evidence on the span's
 * problem (`logCount`), not an occurrence: the request failed once, and the exception with its
 * stack names the failure better than the log line. An error log of a span not (yet) remembered
 * waits in `problem_deferred_logs` for the span to arrive — logs and traces come in separate
 * requests, in either order — unless `defer` is false (group-deferred-logs.ts, after the wait):
 * then it is grouped on its own, as are logs without trace context.
 *
 * Rows are touched in one order — failing spans by (trace, span), then problems by fingerprint
 * (upsertProblems) — so concurrent transactions cannot deadlock on them. A log whose span commits
 * while the log's transaction runs misses it here; it waits, and is linked when its wait ends.
 */
export async function recordProblems(
  run: SqlRunner,
  tenant: TelemetryTenant,
  occurrences: ProblemOccurrence[],
  now: Date,
  options: { defer: boolean } = { defer: true },
): Promise<void> {
  if (occurrences.length === 0) return;
  await rememberFailingSpans(run, tenant, occurrences, now);
  const counted: ProblemOccurrence[] = [];
  const traced: (ProblemOccurrence & { traceId: string; spanId: string })[] = [];
  for (const o of occurrences) {
    if (o.source === "log" && o.traceId !== null && o.spanId !== null)
      traced.push({ ...o, traceId: o.traceId, spanId: o.spanId });
    else counted.push(o);
  }
  const problemOf = await problemsOfSpans(run, tenant, traced);
  const linked: LinkedLog[] = [];
  const waiting: ProblemOccurrence[] = [];
  for (const o of traced) {
    const fingerprint = problemOf.get(spanKey(o));
    if (fingerprint) linked.push({ fingerprint, message: o.message, time: o.time });
    else if (options.defer) waiting.push(o);
    else counted.push(o);
  }
  await deferLogs(run, tenant, waiting, now);
  await upsertProblems(run, tenant, aggregateOccurrences(counted, linked), now.toISOString());
}

const spanKey = (o: { traceId: string; spanId: string }) => `${o.traceId}/${o.spanId}`;

/**
 * Each failing span once, with the problem of its latest exception (the one that ended it, as a
 * rule). A span already remembered keeps its problem: a span is exported once, so a second row
 * means the same span sent again.
 */
async function rememberFailingSpans(
  run: SqlRunner,
  tenant: TelemetryTenant,
  occurrences: ProblemOccurrence[],
  now: Date,
): Promise<void> {
  const latest = new Map<string, { t: string; s: string; f: string; time: string }>();
  for (const o of occurrences) {
    if (o.source !== "span" || o.traceId === null || o.spanId === null) continue;
    const key = spanKey({ traceId: o.traceId, spanId: o.spanId });
    const seen = latest.get(key);
    if (!seen || o.time >= seen.time)
      latest.set(key, { t: o.traceId, s: o.spanId, f: o.fingerprint, time: o.time });
  }
  if (latest.size === 0) return;
  await run.query(
    `insert into problem_spans (environment_id, trace_id, span_id, fingerprint, recorded_at)
     select $1::uuid, r.t, r.s, r.f, $3::timestamptz
       from jsonb_to_recordset($2::text::jsonb) as r(t text, s text, f text)
      order by r.t, r.s
     on conflict do nothing`,
    [tenant.environmentId, JSON.stringify([...latest.values()]), now.toISOString()],
  );
}

/** The problem each of these spans failed with, by `trace/span`; spans without one are absent. */
async function problemsOfSpans(
  run: SqlRunner,
  tenant: TelemetryTenant,
  spans: { traceId: string; spanId: string }[],
): Promise<Map<string, string>> {
  if (spans.length === 0) return new Map();
  const keys = [...new Map(spans.map((s) => [spanKey(s), { t: s.traceId, s: s.spanId }])).values()];
  const rows = await run.query(
    `select p.trace_id, p.span_id, p.fingerprint
       from jsonb_to_recordset($2::text::jsonb) as r(t text, s text)
       join problem_spans p on p.environment_id = $1::uuid and p.trace_id = r.t and p.span_id = r.s`,
    [tenant.environmentId, JSON.stringify(keys)],
  );
  return new Map(
    rows.map((row) => [
      spanKey({ traceId: String(row.trace_id), spanId: String(row.span_id) }),
      String(row.fingerprint),
    ]),
  );
}

async function deferLogs(
  run: SqlRunner,
  tenant: TelemetryTenant,
  occurrences: ProblemOccurrence[],
  now: Date,
): Promise<void> {
  if (occurrences.length === 0) return;
  await run.query(
    `insert into problem_deferred_logs (organization_id, environment_id, occurrence, received_at)
     select $1, $2::uuid, o, $4::timestamptz from jsonb_array_elements($3::text::jsonb) as o`,
    [tenant.organizationId, tenant.environmentId, JSON.stringify(occurrences), now.toISOString()],
  );
}
