import { newId } from "../../../ids.ts";
import { MAX_SAMPLE_TRACE_IDS } from "../../../platform/db/schema/problems.ts";
import type { SqlRunner } from "../storage/sql-runner.ts";
import type { TelemetryTenant } from "../telemetry-records.ts";
import type { ProblemDelta } from "./group-occurrences.ts";

// An occurrence newer than the resolution reopens a resolved problem as `regressed` (one more
// revision, so a stale If-Match from before the regression is refused). Late data from before the
// resolution only counts. Ignored problems stay ignored; counts and samples always move on. A
// problem whose fix was merged and is being watched is regressed by the watch instead
// (remediations/watch-fix.ts: only occurrences from a newer service.version, or after the grace
// period, count against the fix).
const regresses = `p.status = 'resolved' and excluded.last_seen > coalesce(p.resolved_at, '-infinity')
  and not exists (select 1 from remediations r
                   where r.environment_id = p.environment_id and r.problem_id = p.id
                     and r.status = 'merged' and r.watch->>'state' = 'watching')`;

const utc = (column: string) => `to_char(${column} at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The webhook outbox rows of this statement's new problems (`problem.new`) and of the ones it
 * regressed (`problem.regressed`), one per subscribed enabled endpoint (features/webhooks/emit.ts):
 * in the same statement, so an event exists iff its problem change commits, at the cost of one
 * index probe per new or regressed problem.
 */
const problemEventsInsert = `
  insert into webhook_deliveries (id, organization_id, endpoint_id, message_id, event_type, payload, next_attempt_at, created_at)
  select 'whd_' || replace(gen_random_uuid()::text, '-', ''), e.organization_id, e.id,
         'msg_' || replace(gen_random_uuid()::text, '-', ''), t.type,
         jsonb_build_object('type', t.type, 'timestamp', ${utc("$4::timestamptz")}, 'data',
           case when s.inserted
             then jsonb_build_object('organizationId', s.organization_id, 'environmentId', s.environment_id,
                    'problemId', s.id, 'title', s.title, 'service', s.service_name,
                    'firstSeen', ${utc("s.first_seen")}, 'count', s.count)
             else jsonb_build_object('organizationId', s.organization_id, 'environmentId', s.environment_id,
                    'problemId', s.id, 'title', s.title, 'service', s.service_name,
                    'lastSeen', ${utc("s.last_seen")}, 'resolvedAt', ${utc("s.resolved_at")})
           end),
         $4::timestamptz, $4::timestamptz
    from upserted s
   cross join lateral (select case when s.inserted then 'problem.new' else 'problem.regressed' end as type) t
    join webhook_endpoints e
      on e.organization_id = s.organization_id and e.enabled and t.type = any(e.event_types)
   where s.inserted or s.regressed_now`;

/**
 * Adds a batch's deltas to the environment's problems in one statement: new fingerprints become
 * `open` problems, known ones add their count, widen first/last seen, put their sample trace ids
 * in front (distinct, bounded) and take the newer message and stack. Linked logs add to the log
 * evidence of known problems only: a delta of linked logs alone is not inserted unless its problem
 * exists (PostgreSQL checks NOT NULL before ON CONFLICT, hence the coalesces), and on conflict its
 * nulls leave times, samples and status as they are (least/greatest skip nulls).
 */
export async function upsertProblems(
  run: SqlRunner,
  tenant: TelemetryTenant,
  deltas: ProblemDelta[],
  now: string,
): Promise<void> {
  if (deltas.length === 0) return;
  const rows = deltas.map((d) => ({
    id: newId("prb"),
    fingerprint: d.fingerprint,
    title: d.title,
    culprit: d.culprit,
    service_name: d.service,
    exception_type: d.exceptionType,
    count: d.count,
    first_seen: d.firstSeen,
    last_seen: d.lastSeen,
    sample_trace_ids: d.sampleTraceIds,
    sample_message: d.sampleMessage,
    sample_stacktrace: d.sampleStacktrace,
    log_count: d.logCount,
    sample_log_message: d.sampleLogMessage,
  }));
  await run.query(
    `with upserted as (
     insert into problems as p (id, organization_id, environment_id, fingerprint, title, culprit,
            service_name, exception_type, count, first_seen, last_seen, sample_trace_ids,
            sample_message, sample_stacktrace, log_count, sample_log_message, created_at, updated_at)
     select d.id, $1, $2::uuid, d.fingerprint, coalesce(d.title, ''), coalesce(d.culprit, ''),
            coalesce(d.service_name, ''), coalesce(d.exception_type, ''), d.count,
            coalesce(d.first_seen, $4::timestamptz), coalesce(d.last_seen, $4::timestamptz),
            d.sample_trace_ids, d.sample_message,
            d.sample_stacktrace, d.log_count, d.sample_log_message, $4::timestamptz, $4::timestamptz
       from jsonb_to_recordset($3::text::jsonb) as d(id text, fingerprint text, title text,
            culprit text, service_name text, exception_type text, count bigint,
            first_seen timestamptz, last_seen timestamptz, sample_trace_ids text[],
            sample_message text, sample_stacktrace text, log_count bigint, sample_log_message text)
      where d.count > 0
         or exists (select 1 from problems k where k.environment_id = $2::uuid and k.fingerprint = d.fingerprint)
      order by d.fingerprint
     on conflict (environment_id, fingerprint) do update set
       count = p.count + excluded.count,
       first_seen = least(p.first_seen, excluded.first_seen),
       last_seen = greatest(p.last_seen, excluded.last_seen),
       sample_trace_ids = (
         select coalesce(array_agg(s.id order by s.position), '{}')
           from (select u.id, min(u.position) as position
                   from unnest(excluded.sample_trace_ids || p.sample_trace_ids)
                        with ordinality as u(id, position)
                  group by u.id
                  order by min(u.position)
                  limit ${MAX_SAMPLE_TRACE_IDS}) as s),
       sample_message = case when excluded.last_seen >= p.last_seen
                             then excluded.sample_message else p.sample_message end,
       sample_stacktrace = case when excluded.sample_stacktrace is not null
                                 and (excluded.last_seen >= p.last_seen or p.sample_stacktrace is null)
                                then excluded.sample_stacktrace else p.sample_stacktrace end,
       log_count = p.log_count + excluded.log_count,
       sample_log_message = coalesce(excluded.sample_log_message, p.sample_log_message),
       status = case when ${regresses} then 'regressed' else p.status end,
       revision = case when ${regresses} then p.revision + 1 else p.revision end,
       status_changed_at = case when ${regresses} then excluded.updated_at else p.status_changed_at end,
       updated_at = excluded.updated_at
     returning p.id, p.organization_id, p.environment_id, p.title, p.service_name, p.count, p.first_seen,
               p.last_seen, p.resolved_at, (p.xmax = 0) as inserted,
               (p.status = 'regressed' and p.status_changed_at = $4::timestamptz) as regressed_now)
     ${problemEventsInsert}`,
    [tenant.organizationId, tenant.environmentId, JSON.stringify(rows), now],
  );
}
