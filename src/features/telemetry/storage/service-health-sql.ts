import { sql } from "drizzle-orm";
import type { Db } from "../../../platform/db/client.ts";
import { rowsOf } from "../../../platform/db/result-rows.ts";
import type { ServiceHealthQuery, ServiceHealthRow } from "../telemetry-store.ts";

const num = (value: unknown): number => Number(value ?? 0);
const numOrNull = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

/**
 * Services (from spans and logs) in name order after `after`, each with its entry-span figures
 * over the window. Entry spans (server and consumer spans, and roots — every service's spans
 * start at one) are read only through their covering (environment, service, time, duration,
 * status) index; logs through their (environment, service, time) index. Distinct names come from
 * a skip scan of those indexes — one index probe per service, not a scan of the window.
 */
export async function queryServiceHealth(
  db: Db,
  environmentId: string,
  query: ServiceHealthQuery,
): Promise<ServiceHealthRow[]> {
  const after = query.after ?? "";
  const result = await db.execute(sql`
    with recursive
    span_services(name) as (
      (select service_name from telemetry_entry_spans
        where environment_id = ${environmentId} and service_name > ${after}
        order by service_name limit 1)
      union all
      select (select t.service_name from telemetry_entry_spans t
               where t.environment_id = ${environmentId} and t.service_name > s.name
               order by t.service_name limit 1)
        from span_services s where s.name is not null
    ),
    log_services(name) as (
      (select service_name from telemetry_logs
        where environment_id = ${environmentId} and service_name > ${after}
        order by service_name limit 1)
      union all
      select (select t.service_name from telemetry_logs t
               where t.environment_id = ${environmentId} and t.service_name > s.name
               order by t.service_name limit 1)
        from log_services s where s.name is not null
    ),
    names as (
      select name from (select name from span_services where name is not null limit ${query.limit}) a
      union
      select name from (select name from log_services where name is not null limit ${query.limit}) b
      order by name
      limit ${query.limit}
    )
    select n.name as service_name,
           to_char(greatest(
             (select max(start_time) from telemetry_entry_spans
               where environment_id = ${environmentId} and service_name = n.name),
             (select max(time) from telemetry_logs
               where environment_id = ${environmentId} and service_name = n.name)
           ) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as last_seen,
           w.requests, w.errors, w.p50, w.p95, w.p99
      from names n
      left join lateral (
        select count(*)::float8 as requests,
               (count(*) filter (where status_code = 2))::float8 as errors,
               percentile_cont(0.5) within group (order by duration_ns) as p50,
               percentile_cont(0.95) within group (order by duration_ns) as p95,
               percentile_cont(0.99) within group (order by duration_ns) as p99
          from telemetry_entry_spans
         where environment_id = ${environmentId} and service_name = n.name
           and start_time >= ${query.from}::timestamptz and start_time < ${query.to}::timestamptz
      ) w on true
     order by n.name`);
  return rowsOf(result).map((row) => ({
    serviceName: String(row.service_name),
    lastSeen: String(row.last_seen),
    requests: num(row.requests),
    errors: num(row.errors),
    p50Ns: numOrNull(row.p50),
    p95Ns: numOrNull(row.p95),
    p99Ns: numOrNull(row.p99),
  }));
}
