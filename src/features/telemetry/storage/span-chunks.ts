import { createHash } from "node:crypto";
import type { SpanRecord, TelemetryTenant } from "../telemetry-store.ts";
import { chunkSpanJson } from "./chunk-codec.ts";
import { binaryCopyWriter, field, rowStart } from "./copy-binary.ts";
import { type ResourceRef, resourceRefs } from "./resources.ts";
import type { SqlRunner } from "./sql-runner.ts";

/**
 * A batch of spans encoded for storage: the binary COPY data of its trace chunks and of its entry
 * spans (outside the JS heap, transferable between threads) and the resources they refer to.
 * Plain data, so a conversion worker can build it and hand it to the thread that writes.
 */
export type SpanRows = { count: number; chunks: Buffer; entries: Buffer; resources: ResourceRef[] };

const CHUNK_COLUMNS =
  "organization_id, environment_id, trace_id, chunk_id, start_time, last_start, span_count, spans";
const ENTRY_COLUMNS =
  "environment_id, service_name, start_time, duration_ns, status_code, trace_id, chunk_id";

/** Server and consumer spans, and roots: the requests a service handled (service health). */
const isEntrySpan = (r: SpanRecord): boolean => r.kind === 2 || r.kind === 5 || r.parentSpanId === null;

type Chunk = { spans: SpanRecord[]; json: string[] };

/**
 * Spans → one chunk per trace (its spans' JSON, earliest and latest start, a hash of its span ids)
 * and one entry row per entry span, both as binary COPY rows (copy-binary.ts).
 */
export function encodeSpanRows(tenant: TelemetryTenant, records: SpanRecord[]): SpanRows {
  const resources = resourceRefs();
  const traces = new Map<string, Chunk>();
  for (const r of records) {
    const ref = resources.refOf(r.resourceAttributes, r.serviceName);
    let chunk = traces.get(r.traceId);
    if (!chunk) {
      chunk = { spans: [], json: [] };
      traces.set(r.traceId, chunk);
    }
    chunk.spans.push(r);
    chunk.json.push(chunkSpanJson(r, ref.id));
  }

  const environment = field.uuid(tenant.environmentId);
  const chunkStart = rowStart(8) + field.text(tenant.organizationId) + environment;
  const entryStart = rowStart(7) + environment;
  // A batch names a few services: each is encoded once.
  const services = new Map<string, string>();
  const chunks = binaryCopyWriter(records.length * 640);
  const entries = binaryCopyWriter(traces.size * 96);
  for (const [traceId, chunk] of traces) {
    let start = Number.POSITIVE_INFINITY;
    let lastStart = Number.NEGATIVE_INFINITY;
    const ids = createHash("md5");
    for (const s of chunk.spans) {
      if (s.startMicros < start) start = s.startMicros;
      if (s.startMicros > lastStart) lastStart = s.startMicros;
      ids.update(s.spanId);
    }
    const chunkId = ids.digest("hex").slice(0, 16);
    const trace = field.text(traceId);
    const chunkField = field.text(chunkId);
    chunks.push(
      chunkStart +
        trace +
        chunkField +
        field.timestamp(start) +
        field.timestamp(lastStart) +
        field.int32(chunk.spans.length),
    );
    chunks.pushText(`[${chunk.json.join(",")}]`);
    for (const s of chunk.spans) {
      if (!isEntrySpan(s)) continue;
      let service = services.get(s.serviceName);
      if (service === undefined) {
        service = field.text(s.serviceName);
        services.set(s.serviceName, service);
      }
      entries.push(
        entryStart +
          service +
          field.timestamp(s.startMicros) +
          field.int64(s.durationNs) +
          field.int16(s.statusCode) +
          trace +
          chunkField,
      );
    }
  }
  // Bytes outside the JS heap: young-generation GCs need not copy them while the batch waits.
  return {
    count: records.length,
    chunks: chunks.done(),
    entries: entries.done(),
    resources: resources.all(),
  };
}

/** Fast path: two COPYs. Fails as a whole on a chunk already stored (primary key). */
export async function copySpans(run: SqlRunner, rows: SpanRows): Promise<void> {
  await run.copyIn(`telemetry_trace_chunks (${CHUNK_COLUMNS})`, rows.chunks, "binary");
  await run.copyIn(`telemetry_entry_spans (${ENTRY_COLUMNS})`, rows.entries, "binary");
}

/**
 * Slow path, for a batch already stored (an exporter re-sending after a lost answer): the rows go
 * to transaction-local staging tables, then across — chunks with ON CONFLICT DO NOTHING, entry
 * spans only of the chunks that were new. Answers the traces whose chunks were new, so that only
 * their exceptions count.
 */
export async function copyNewSpans(run: SqlRunner, rows: SpanRows): Promise<Set<string>> {
  await run.query(
    "create temp table telemetry_trace_chunks_in (like telemetry_trace_chunks) on commit drop",
    [],
  );
  await run.query(
    "create temp table telemetry_entry_spans_in (like telemetry_entry_spans) on commit drop",
    [],
  );
  await run.copyIn(`telemetry_trace_chunks_in (${CHUNK_COLUMNS})`, rows.chunks, "binary");
  await run.copyIn(`telemetry_entry_spans_in (${ENTRY_COLUMNS})`, rows.entries, "binary");
  const fresh = await run.query(
    `with fresh as (
       insert into telemetry_trace_chunks (${CHUNK_COLUMNS})
       select ${CHUNK_COLUMNS} from telemetry_trace_chunks_in
       on conflict do nothing
       returning trace_id, chunk_id
     ), entries as (
       insert into telemetry_entry_spans
       select e.* from telemetry_entry_spans_in e
       join fresh f on f.trace_id = e.trace_id and f.chunk_id = e.chunk_id
     )
     select trace_id from fresh`,
    [],
  );
  return new Set(fresh.map((row) => String(row.trace_id)));
}
