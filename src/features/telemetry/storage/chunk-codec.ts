import type { SpanRecord } from "../telemetry-store.ts";

/**
 * A span as it sits in a trace chunk's JSON (`telemetry_trace_chunks.spans`): the record without
 * its trace id (the chunk's) and resource attributes (`resourceId` points to them), timestamps as
 * microseconds since the epoch. Migration 0014 writes the same shape from SQL.
 */
export type ChunkSpan = Omit<SpanRecord, "traceId" | "resourceAttributes"> & {
  /** The resource's id in decimal (telemetry_resources.resource_id). */
  resourceId: string;
};

const text = (value: string | null): string => (value === null ? "null" : JSON.stringify(value));

/**
 * One span as JSON, assembled from its parts: ids are lowercase hex and numbers are numbers, so
 * only the free text and the attribute maps go through JSON.stringify — no object per span is
 * built just to be serialised (this runs for every ingested span).
 */
export function chunkSpanJson(r: SpanRecord, resourceId: string): string {
  return (
    `{"spanId":"${r.spanId}","parentSpanId":${r.parentSpanId === null ? "null" : `"${r.parentSpanId}"`}` +
    `,"serviceName":${JSON.stringify(r.serviceName)},"name":${JSON.stringify(r.name)},"kind":${r.kind}` +
    `,"startMicros":${r.startMicros},"endMicros":${r.endMicros},"durationNs":${r.durationNs}` +
    `,"statusCode":${r.statusCode},"statusMessage":${text(r.statusMessage)},"scopeName":${text(r.scopeName)}` +
    `,"resourceId":"${resourceId}","attributes":${JSON.stringify(r.attributes)}` +
    `,"events":${r.events.length === 0 ? "[]" : JSON.stringify(r.events)}` +
    `,"links":${r.links.length === 0 ? "[]" : JSON.stringify(r.links)}}`
  );
}

/** A chunk's spans back from their JSON text. */
export const parseChunkSpans = (json: string): ChunkSpan[] => JSON.parse(json) as ChunkSpan[];
