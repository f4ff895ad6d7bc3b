import { hash } from "node:crypto";
import type { TelemetryTenant } from "../telemetry-records.ts";
import { traceChunkWriter } from "./chunk-codec.ts";
import { binaryCopyWriter, field, joinCopyData, rowStart } from "./copy-binary.ts";
import type { ResourceRef } from "./resources.ts";
import type { SqlRunner } from "./sql-runner.ts";
import type { EncodedSpan } from "./stored-spans.ts";

/**
 * A batch of spans encoded for storage: the binary COPY data of its trace chunks and entry spans
 * (transferable between threads) and the resources they refer to.
 */
export type SpanRows = { count: number; chunks: Buffer; entries: Buffer; resources: ResourceRef[] };

const CHUNK_COLUMNS =
  "organization_id, environment_id, trace_id, chunk_id, start_time, last_start, span_count, spans_proto";
const ENTRY_COLUMNS =
  "environment_id, service_name, start_time, duration_ns, status_code, trace_id, chunk_id";

/**
 * Spans → one chunk per trace (a `TraceChunk` of its spans, earliest and latest start, a hash of
 * its span ids) and one entry row per entry span, both as binary COPY rows (copy-binary.ts).
 */
export function encodeSpanRows(
  tenant: TelemetryTenant,
  spans: EncodedSpan[],
  resources: ResourceRef[],
): SpanRows {
  const traces = new Map<string, EncodedSpan[]>();
  let bytes = 0;
  for (const s of spans) {
    const trace = traces.get(s.traceId);
    if (trace) trace.push(s);
    else traces.set(s.traceId, [s]);
    bytes += s.bytes.length;
  }

  const environment = field.uuid(tenant.environmentId);
  const chunkStart = rowStart(8) + field.text(tenant.organizationId) + environment;
  const entryStart = rowStart(7) + environment;
  // A batch names a few services: each is encoded once.
  const services = new Map<string, string>();
  const writer = traceChunkWriter();
  const chunks = binaryCopyWriter(bytes + traces.size * 160);
  const entries = binaryCopyWriter(traces.size * 96);
  for (const [traceId, trace] of traces) {
    let start = Number.POSITIVE_INFINITY;
    let lastStart = Number.NEGATIVE_INFINITY;
    let ids = "";
    for (const s of trace) {
      if (s.startMicros < start) start = s.startMicros;
      if (s.startMicros > lastStart) lastStart = s.startMicros;
      ids += s.spanId;
    }
    // The chunk's id: the same spans (an exporter re-sending a batch) give the same chunk.
    const chunkId = hash("md5", ids, "hex").slice(0, 16);
    const traceField = field.text(traceId);
    const chunkField = field.text(chunkId);
    chunks.push(
      chunkStart +
        traceField +
        chunkField +
        field.timestamp(start) +
        field.timestamp(lastStart) +
        field.int32(trace.length),
    );
    const chunk = writer.layout(trace);
    chunks.pushBytes(chunk.length, chunk.write);
    for (const s of trace) {
      if (!s.entry) continue;
      let service = services.get(s.group.serviceName);
      if (service === undefined) {
        service = field.text(s.group.serviceName);
        services.set(s.group.serviceName, service);
      }
      entries.push(
        entryStart +
          service +
          field.timestamp(s.startMicros) +
          field.int64(s.durationNs) +
          field.int16(s.statusCode) +
          traceField +
          chunkField,
      );
    }
  }
  return { count: spans.length, chunks: chunks.done(), entries: entries.done(), resources };
}

/**
 * Fast path: two COPYs carrying the rows of one or more requests. Fails as a whole on a chunk
 * already stored (primary key).
 */
export async function copySpans(run: SqlRunner, rows: SpanRows[]): Promise<void> {
  const chunks = joinCopyData(rows.map((r) => r.chunks));
  await run.copyIn(`telemetry_trace_chunks (${CHUNK_COLUMNS})`, chunks, "binary");
  const entries = joinCopyData(rows.map((r) => r.entries));
  await run.copyIn(`telemetry_entry_spans (${ENTRY_COLUMNS})`, entries, "binary");
}

/**
 * Slow path, for a batch stored before (a retry): the rows go to staging tables, then across —
 * chunks with ON CONFLICT DO NOTHING, entry spans of new chunks only. Answers the traces whose
 * chunks were new: only their exceptions count.
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
