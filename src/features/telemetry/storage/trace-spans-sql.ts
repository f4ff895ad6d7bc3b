import { and, asc, eq } from "drizzle-orm";
import type { Db } from "../../../db/client.ts";
import { telemetryResources, telemetrySpans } from "../../../db/schema/telemetry.ts";
import type { StoredSpan } from "../telemetry-store.ts";
import { isoText } from "./iso-text.ts";

/** One trace's spans (primary-key prefix lookup), earliest first, with their resources' attributes. */
export async function queryTraceSpans(
  db: Db,
  environmentId: string,
  traceId: string,
  limit: number,
): Promise<StoredSpan[]> {
  const s = telemetrySpans;
  const r = telemetryResources;
  const rows = await db
    .select({
      traceId: s.traceId,
      spanId: s.spanId,
      parentSpanId: s.parentSpanId,
      serviceName: s.serviceName,
      name: s.name,
      kind: s.kind,
      startTime: isoText(s.startTime),
      endTime: isoText(s.endTime),
      durationNs: s.durationNs,
      statusCode: s.statusCode,
      statusMessage: s.statusMessage,
      scopeName: s.scopeName,
      attributes: s.attributes,
      resourceAttributes: r.attributes,
      events: s.events,
      links: s.links,
    })
    .from(s)
    .leftJoin(r, and(eq(r.environmentId, s.environmentId), eq(r.resourceId, s.resourceId)))
    .where(and(eq(s.environmentId, environmentId), eq(s.traceId, traceId)))
    // A trace past the limit keeps its earliest spans, where its roots are.
    .orderBy(asc(s.startTime), asc(s.spanId))
    .limit(limit);
  return rows.map((row) => ({ ...row, resourceAttributes: row.resourceAttributes ?? {} }));
}
