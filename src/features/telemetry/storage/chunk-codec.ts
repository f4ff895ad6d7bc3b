import { OTLP_LIMITS } from "../limits.ts";
import { chunkMessages } from "../otlp-schema.ts";
import type { Span } from "../otlp-types.ts";
import { NO_LATEST, toSpanRecord } from "../span-records.ts";
import type { SpanRecord } from "../telemetry-records.ts";
import type { EncodedSpan, SpanGroupRef } from "./stored-spans.ts";

/** A span as a trace chunk gives it back: no trace id (the chunk's), its resource by id. */
export type ChunkSpan = Omit<SpanRecord, "traceId" | "resourceAttributes"> & {
  /** The resource's id in decimal (telemetry_resources.resource_id). */
  resourceId: string;
};

/**
 * A chunk's spans back from what `telemetry_trace_chunks` holds: `spans_proto` (a `TraceChunk`
 * message, written since migration 0016) or `spans` (JSON text of ChunkSpans, written by
 * migration 0014 and by ingest until 0016; such rows age out with retention). Stored spans are
 * OTLP spans, bounded here — the same `toSpanRecord` ingest used to apply before storing.
 */
export function chunkSpans(row: { spans: string | null; spansProto: Uint8Array | null }): ChunkSpan[] {
  if (row.spansProto) return decodeChunk(row.spansProto);
  return row.spans === null ? [] : (JSON.parse(row.spans) as ChunkSpan[]);
}

/** A record as a chunk gives it back: its trace is the chunk's, its resource a reference. */
export function toChunkSpan(record: SpanRecord, resourceId: string): ChunkSpan {
  const { traceId: _trace, resourceAttributes: _resource, ...span } = record;
  return { ...span, resourceId };
}

const noResource = Object.freeze({});

function decodeChunk(bytes: Uint8Array): ChunkSpan[] {
  const chunk = chunkMessages.chunk.decode(bytes) as unknown as {
    groups?: { resourceId?: string; serviceName?: string; scopeName?: string; spans?: Span[] }[];
  };
  const out: ChunkSpan[] = [];
  for (const group of chunk.groups ?? []) {
    const resourceId = group.resourceId ?? "0";
    const context = {
      serviceName: group.serviceName ?? "",
      scopeName: group.scopeName || null,
      resourceAttributes: noResource,
      limits: OTLP_LIMITS,
      latest: NO_LATEST,
    };
    for (const span of group.spans ?? []) {
      const record = toSpanRecord(span, context);
      // Checked before it was stored; a span that fails now is skipped, never half-shown.
      if (typeof record === "string") continue;
      out.push(toChunkSpan(record, resourceId));
    }
  }
  return out;
}

// TraceChunk.groups = 1; SpanGroup.resource_id = 1, service_name = 2, scope_name = 3, spans = 4.
const GROUP_TAG = 0x0a;
const SPAN_TAG = 0x22;

const varintLength = (n: number): number =>
  n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;

function writeVarint(out: Buffer, at: number, value: number): number {
  let n = value;
  while (n > 0x7f) {
    out[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[at++] = n;
  return at;
}

/**
 * One trace's spans as a `TraceChunk`, written by hand around the spans' own bytes (protobufjs
 * would copy everything into a Writer first): consecutive spans of one group share a `SpanGroup`.
 */
export function traceChunkWriter() {
  const headers = new Map<SpanGroupRef, Uint8Array>();
  const headerOf = (group: SpanGroupRef): Uint8Array => {
    let header = headers.get(group);
    if (!header) {
      header = chunkMessages.group
        .encode({
          resourceId: group.resource.id,
          serviceName: group.serviceName,
          scopeName: group.scopeName ?? "",
        })
        .finish();
      headers.set(group, header);
    }
    return header;
  };
  /** Consecutive spans of one group: one `SpanGroup` message of `length` bytes. */
  type Run = { header: Uint8Array; spans: EncodedSpan[]; length: number };
  const runsOf = (spans: EncodedSpan[]): Run[] => {
    const runs: Run[] = [];
    let run: Run | undefined;
    let group: SpanGroupRef | undefined;
    for (const span of spans) {
      if (!run || span.group !== group) {
        group = span.group;
        const header = headerOf(group);
        run = { header, spans: [], length: header.length };
        runs.push(run);
      }
      run.spans.push(span);
      run.length += 1 + varintLength(span.bytes.length) + span.bytes.length;
    }
    return runs;
  };
  return {
    /** The chunk's size in bytes, and how to write it at `at` in `out` (returns the end). */
    layout(spans: EncodedSpan[]): { length: number; write(out: Buffer, at: number): number } {
      const runs = runsOf(spans);
      const length = runs.reduce((sum, run) => sum + 1 + varintLength(run.length) + run.length, 0);
      return {
        length,
        write(out, at) {
          let position = at;
          for (const run of runs) {
            out[position++] = GROUP_TAG;
            position = writeVarint(out, position, run.length);
            out.set(run.header, position);
            position += run.header.length;
            for (const { bytes } of run.spans) {
              out[position++] = SPAN_TAG;
              position = writeVarint(out, position, bytes.length);
              out.set(bytes, position);
              position += bytes.length;
            }
          }
          return position;
        },
      };
    },
  };
}
