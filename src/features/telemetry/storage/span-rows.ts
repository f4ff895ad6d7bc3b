import type { SpanRecord, TelemetryTenant } from "../telemetry-store.ts";
import { copyBuffer, copyJson, copyNullable, copyText } from "./copy-text.ts";
import { type ResourceRef, resourceRefs } from "./resources.ts";
import type { SqlRunner } from "./sql-runner.ts";

/**
 * A batch of spans encoded for storage: the COPY text of its rows (outside the JS heap, and
 * transferable between threads) and the resources they refer to. Plain data, so a conversion
 * worker can build it and hand it to the thread that writes.
 */
export type SpanRows = { count: number; data: Buffer; resources: ResourceRef[] };

const columns =
  "organization_id, environment_id, trace_id, span_id, parent_span_id, service_name, name, kind, " +
  "start_time, end_time, duration_ns, status_code, status_message, scope_name, resource_id, attributes, " +
  "events, links";

/** Spans as COPY text rows (copy-text.ts), in `columns` order, UTF-8. */
export function spanCopyText(
  tenant: TelemetryTenant,
  records: SpanRecord[],
  refOf: (record: SpanRecord) => ResourceRef,
): Buffer {
  const prefix = `${copyText(tenant.organizationId)}\t${tenant.environmentId}\t`;
  const data = copyBuffer(records.length * 512);
  for (const r of records) {
    data.push(
      `${prefix}${r.traceId}\t${r.spanId}\t${r.parentSpanId ?? "\\N"}\t${copyText(r.serviceName)}\t` +
        `${copyText(r.name)}\t${r.kind}\t${r.startTime}\t${r.endTime}\t${r.durationNs}\t${r.statusCode}\t` +
        `${copyNullable(r.statusMessage)}\t${copyNullable(r.scopeName)}\t${refOf(r).id}\t` +
        `${copyJson(r.attributes)}\t${r.events.length === 0 ? "[]" : copyJson(r.events)}\t` +
        `${r.links.length === 0 ? "[]" : copyJson(r.links)}\n`,
    );
  }
  // Bytes outside the JS heap: young-generation GCs need not copy them while the batch waits.
  return data.done();
}

/** Spans → their COPY text and resources; one hash per OTLP resource, however many spans share it. */
export function encodeSpanRows(tenant: TelemetryTenant, records: SpanRecord[]): SpanRows {
  const resources = resourceRefs();
  const data = spanCopyText(tenant, records, (r) => resources.refOf(r.resourceAttributes, r.serviceName));
  return { count: records.length, data, resources: resources.all() };
}

/** Fast path: one COPY. Fails as a whole on a span already stored (primary key). */
export const copySpans = (run: SqlRunner, data: Buffer): Promise<void> =>
  run.copyIn(`telemetry_spans (${columns})`, data);

/**
 * Slow path, for batches holding spans already stored (an exporter retrying after a lost
 * answer): the same rows go to a transaction-local staging table, then across with ON CONFLICT DO
 * NOTHING, which skips the stored ones and answers which spans were new — so their exceptions
 * count once.
 */
export async function copyNewSpans(run: SqlRunner, data: Buffer): Promise<Set<string>> {
  await run.query(
    "create temp table telemetry_spans_in (like telemetry_spans including defaults) on commit drop",
    [],
  );
  await run.copyIn(`telemetry_spans_in (${columns})`, data);
  const inserted = await run.query(
    `insert into telemetry_spans (${columns})
     select ${columns} from telemetry_spans_in
     on conflict do nothing
     returning trace_id, span_id`,
    [],
  );
  return new Set(inserted.map((row) => `${String(row.trace_id)}/${String(row.span_id)}`));
}
