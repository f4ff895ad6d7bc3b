import { sql } from "drizzle-orm";
import type { Db } from "../../../platform/db/client.ts";
import { rowsOf } from "../../../platform/db/result-rows.ts";
import type { JsonObject } from "../../../platform/db/schema/telemetry.ts";
import { microsToIso } from "../otlp-scalars.ts";
import type { StoredSpan } from "../telemetry-store.ts";
import { type ChunkSpan, chunkSpans } from "./chunk-codec.ts";

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
