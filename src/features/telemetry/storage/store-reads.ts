import { and, desc, eq, gte, ilike, lt, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../../platform/db/client.ts";
import { rowsOf } from "../../../platform/db/result-rows.ts";
import { type JsonObject, telemetryLogs } from "../../../platform/db/schema/telemetry.ts";
import { microsToIso } from "../otlp-scalars.ts";
import type {
  LogSearch,
  ServiceHealthQuery,
  ServiceHealthRow,
  ServiceSeriesQuery,
  ServiceSeriesRow,
  StoredLog,
  StoredSpan,
} from "../telemetry-store.ts";
import { type ChunkSpan, chunkSpans } from "./chunk-codec.ts";

/** The reads behind the query verbs (`TelemetryStore`'s serviceHealth, searchLogs and traceSpans). */

const num = (value: unknown): number => Number(value ?? 0);
const numOrNull = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

/**
 * A timestamp as ISO 8601 text with microseconds, formatted by the database: the drivers would
 * otherwise answer in their own formats (postgres.js passes PostgreSQL's text through; PGlite
 * builds a Date, which keeps milliseconds only).
 */
const isoText = (value: SQL): SQL<string> =>
  sql<string>`to_char(${value} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** The body of recursive CTE `cte`: the distinct service names of `table` after `after`. */
const skipScan = (cte: string, table: string, environmentId: string, after: string) => sql`
      (select service_name from ${sql.raw(table)}
        where environment_id = ${environmentId} and service_name > ${after}
        order by service_name limit 1)
      union all
      select (select t.service_name from ${sql.raw(table)} t
               where t.environment_id = ${environmentId} and t.service_name > s.name
               order by t.service_name limit 1)
        from ${sql.raw(cte)} s where s.name is not null`;

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
    span_services(name) as (${skipScan("span_services", "telemetry_entry_spans", environmentId, after)}),
    log_services(name) as (${skipScan("log_services", "telemetry_logs", environmentId, after)}),
    names as (
      select name from (select name from span_services where name is not null limit ${query.limit}) a
      union
      select name from (select name from log_services where name is not null limit ${query.limit}) b
      order by name
      limit ${query.limit}
    )
    select n.name as service_name,
           ${isoText(sql`greatest(
             (select max(start_time) from telemetry_entry_spans
               where environment_id = ${environmentId} and service_name = n.name),
             (select max(time) from telemetry_logs
               where environment_id = ${environmentId} and service_name = n.name)
           )`)} as last_seen,
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

/**
 * Entry-span figures of the named services per time bucket, in one statement: `date_bin` puts
 * each span in its bucket (aligned to the window's start), the percentiles are per bucket. The
 * same covering (environment, service, time, duration, status) index as service health serves
 * it: one range scan per service over the window, no heap reads.
 */
export async function queryServiceSeries(
  db: Db,
  environmentId: string,
  query: ServiceSeriesQuery,
): Promise<ServiceSeriesRow[]> {
  if (query.services.length === 0) return [];
  const names = sql.join(
    query.services.map((name) => sql`${name}`),
    sql`, `,
  );
  const stride = `${Math.max(1, Math.round(query.bucketSeconds))} seconds`;
  const result = await db.execute(sql`
    select service_name,
           ${isoText(sql`date_bin(${stride}::interval, start_time, ${query.from}::timestamptz)`)} as bucket,
           count(*)::float8 as requests,
           (count(*) filter (where status_code = 2))::float8 as errors,
           percentile_cont(0.5) within group (order by duration_ns) as p50,
           percentile_cont(0.95) within group (order by duration_ns) as p95,
           percentile_cont(0.99) within group (order by duration_ns) as p99
      from telemetry_entry_spans
     where environment_id = ${environmentId}
       and service_name in (${names})
       and start_time >= ${query.from}::timestamptz and start_time < ${query.to}::timestamptz
     group by service_name, 2
     order by service_name, 2`);
  return rowsOf(result).map((row) => ({
    serviceName: String(row.service_name),
    bucket: String(row.bucket),
    requests: num(row.requests),
    errors: num(row.errors),
    p50Ns: num(row.p50),
    p95Ns: num(row.p95),
    p99Ns: num(row.p99),
  }));
}

/** `%`, `_` and the escape character itself match literally in the text filter. */
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Log records of the window, newest first (time, then id), filtered and keyset-paged. */
export async function querySearchLogs(
  db: Db,
  environmentId: string,
  search: LogSearch,
): Promise<StoredLog[]> {
  const t = telemetryLogs;
  const conditions: (SQL | undefined)[] = [
    eq(t.environmentId, environmentId),
    gte(t.time, search.from),
    lt(t.time, search.to),
    search.serviceName === undefined ? undefined : eq(t.serviceName, search.serviceName),
    search.minSeverity === undefined ? undefined : gte(t.severityNumber, search.minSeverity),
    search.text === undefined ? undefined : ilike(t.body, likePattern(search.text)),
    search.traceId === undefined ? undefined : eq(t.traceId, search.traceId),
    search.before === undefined
      ? undefined
      : sql`(${t.time}, ${t.id}) < (${search.before.time}::timestamptz, ${search.before.id})`,
  ];
  const rows = await db
    .select({
      id: t.id,
      time: isoText(sql`${t.time}`),
      severityNumber: t.severityNumber,
      severityText: t.severityText,
      body: t.body,
      serviceName: t.serviceName,
      traceId: t.traceId,
      spanId: t.spanId,
      eventName: t.eventName,
      scopeName: t.scopeName,
      attributes: t.attributes,
    })
    .from(t)
    .where(and(...conditions))
    .orderBy(desc(t.time), desc(t.id))
    .limit(search.limit);
  return rows.map((row) => ({ ...row, id: Number(row.id), resourceAttributes: {} }));
}

const bytewise = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * One trace's spans, earliest first (then by span id), at most `limit`, with their resources'
 * attributes. Only the chunks that can hold the earliest `limit` spans are read: taking chunks in
 * order of their earliest span until they hold `limit` spans, none of the spans sought starts
 * after the latest start among them, so no chunk starting after that can hold one. A span stored
 * twice (re-sent in a differently composed request) is read once.
 */
export async function queryTraceSpans(
  db: Db,
  environmentId: string,
  traceId: string,
  limit: number,
): Promise<StoredSpan[]> {
  const chunks = rowsOf(
    await db.execute(sql`
      select spans, spans_proto from telemetry_trace_chunks
       where environment_id = ${environmentId} and trace_id = ${traceId}
         and start_time <= (
           select max(last_start) from (
             select last_start,
                    sum(span_count) over (order by start_time, chunk_id) - span_count as before
               from telemetry_trace_chunks
              where environment_id = ${environmentId} and trace_id = ${traceId}
           ) ordered
            where before < ${limit}
         )`),
  );
  const byId = new Map<string, ChunkSpan>();
  for (const chunk of chunks) {
    const stored = {
      spans: chunk.spans === null ? null : String(chunk.spans),
      spansProto: (chunk.spans_proto as Uint8Array | null) ?? null,
    };
    for (const span of chunkSpans(stored)) {
      if (!byId.has(span.spanId)) byId.set(span.spanId, span);
    }
  }
  const spans = [...byId.values()]
    .sort((a, b) => a.startMicros - b.startMicros || bytewise(a.spanId, b.spanId))
    .slice(0, limit);
  const resources = await resourceAttributes(db, environmentId, [...new Set(spans.map((s) => s.resourceId))]);
  return spans.map(({ resourceId, startMicros, endMicros, ...span }) => ({
    ...span,
    traceId,
    startTime: microsToIso({ micros: startMicros, rest: 0 }),
    endTime: microsToIso({ micros: endMicros, rest: 0 }),
    resourceAttributes: resources.get(resourceId) ?? {},
  }));
}

async function resourceAttributes(
  db: Db,
  environmentId: string,
  ids: string[],
): Promise<Map<string, JsonObject>> {
  if (ids.length === 0) return new Map();
  const rows = rowsOf(
    await db.execute(sql`
      select resource_id::text as id, attributes from telemetry_resources
       where environment_id = ${environmentId}
         and resource_id = any(${`{${ids.join(",")}}`}::bigint[])`),
  );
  return new Map(rows.map((row) => [String(row.id), row.attributes as JsonObject]));
}
