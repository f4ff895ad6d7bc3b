import { and, desc, eq, gte, ilike, lt, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../../platform/db/client.ts";
import { telemetryLogs } from "../../../platform/db/schema/telemetry.ts";
import type { LogSearch, StoredLog } from "../telemetry-store.ts";
import { isoText } from "./iso-text.ts";

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
      time: isoText(t.time),
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
