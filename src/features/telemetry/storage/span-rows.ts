import type { SpanRecord, TelemetryTenant } from "../telemetry-store.ts";
import { binaryCopyWriter, field, rowStart } from "./copy-binary.ts";
import { type ResourceRef, resourceRefs } from "./resources.ts";
import type { SqlRunner } from "./sql-runner.ts";

/**
 * A batch of spans encoded for storage: the binary COPY data of its rows (outside the JS heap,
 * and transferable between threads) and the resources they refer to. Plain data, so a conversion
 * worker can build it and hand it to the thread that writes.
 */
export type SpanRows = { count: number; data: Buffer; resources: ResourceRef[] };

const columns =
  "organization_id, environment_id, trace_id, span_id, parent_span_id, service_name, name, kind, " +
  "start_time, end_time, duration_ns, status_code, status_message, scope_name, resource_id, attributes, " +
  "events, links";
const COLUMN_COUNT = 18;
const EMPTY_ARRAY = field.text("[]");

/** Spans as binary COPY rows (copy-binary.ts), in `columns` order. */
export function spanCopyData(
  tenant: TelemetryTenant,
  records: SpanRecord[],
  refOf: (record: SpanRecord) => ResourceRef,
): Buffer {
  // The same for every row of the batch: encoded once.
  const tenantFields =
    rowStart(COLUMN_COUNT) + field.text(tenant.organizationId) + field.uuid(tenant.environmentId);
  // A batch has one resource or a few: each id is encoded once, not per row.
  const resourceIds = new Map<ResourceRef, string>();
  const out = binaryCopyWriter(records.length * 640);
  for (const r of records) {
    const ref = refOf(r);
    let resourceId = resourceIds.get(ref);
    if (resourceId === undefined) {
      resourceId = field.int64Decimal(ref.id);
      resourceIds.set(ref, resourceId);
    }
    out.push(
      tenantFields +
        field.text(r.traceId) +
        field.text(r.spanId) +
        field.nullableText(r.parentSpanId) +
        field.text(r.serviceName) +
        field.text(r.name) +
        field.int16(r.kind) +
        field.timestamp(r.startMicros) +
        field.timestamp(r.endMicros) +
        field.int64(r.durationNs) +
        field.int16(r.statusCode) +
        field.nullableText(r.statusMessage) +
        field.nullableText(r.scopeName) +
        resourceId +
        field.text(JSON.stringify(r.attributes)) +
        (r.events.length === 0 ? EMPTY_ARRAY : field.text(JSON.stringify(r.events))) +
        (r.links.length === 0 ? EMPTY_ARRAY : field.text(JSON.stringify(r.links))),
    );
  }
  // Bytes outside the JS heap: young-generation GCs need not copy them while the batch waits.
  return out.done();
}

/** Spans → their COPY data and resources; one hash per OTLP resource, however many spans share it. */
export function encodeSpanRows(tenant: TelemetryTenant, records: SpanRecord[]): SpanRows {
  const resources = resourceRefs();
  const data = spanCopyData(tenant, records, (r) => resources.refOf(r.resourceAttributes, r.serviceName));
  return { count: records.length, data, resources: resources.all() };
}

/** Fast path: one COPY. Fails as a whole on a span already stored (primary key). */
export const copySpans = (run: SqlRunner, data: Buffer): Promise<void> =>
  run.copyIn(`telemetry_spans (${columns})`, data, "binary");

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
  await run.copyIn(`telemetry_spans_in (${columns})`, data, "binary");
  const inserted = await run.query(
    `insert into telemetry_spans (${columns})
     select ${columns} from telemetry_spans_in
     on conflict do nothing
     returning trace_id, span_id`,
    [],
  );
  return new Set(inserted.map((row) => `${String(row.trace_id)}/${String(row.span_id)}`));
}
