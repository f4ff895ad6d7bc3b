import type { OtlpLimits } from "../limits.ts";
import { cleanText, nanosBetween } from "../otlp-scalars.ts";
import { chunkMessages } from "../otlp-schema.ts";
import type { TraceRequest } from "../otlp-types.ts";
import { attributesToJson, serviceNameOf } from "../otlp-values.ts";
import { createRejections, type Rejections } from "../rejections.ts";
import { checkSpan, isEntrySpan, latestEnd, type SpanContext, spanRecordOf } from "../span-records.ts";
import type { SpanRecord } from "../telemetry-store.ts";
import { type ResourceRef, resourceRefs } from "./resources.ts";
import { encodeSpanRecord } from "./span-message.ts";
import { spanRanges } from "./span-wire.ts";

/**
 * A span stored above this many bytes is re-encoded from its bounded record instead of kept as
 * the exporter's bytes: what a chunk holds per span stays bounded (bounds apply again on read).
 * SDK spans are ~0.2–2 KiB, with an exception's stack trace a few KiB.
 */
export const MAX_RAW_SPAN_BYTES = 16 * 1024;

/** The resource and scope a run of a chunk's spans shares (a `SpanGroup` without its spans). */
export type SpanGroupRef = { resource: ResourceRef; serviceName: string; scopeName: string | null };

/** A span ready for its trace chunk: what the chunk and entry rows need, and its message bytes. */
export type EncodedSpan = {
  traceId: string;
  spanId: string;
  startMicros: number;
  durationNs: number;
  statusCode: number;
  entry: boolean;
  group: SpanGroupRef;
  /** The OTLP `Span` message. */
  bytes: Uint8Array;
};

export type AcceptedSpans = {
  spans: EncodedSpan[];
  /** Records of the spans that have events: exception detection reads them. */
  withEvents: SpanRecord[];
  rejected: Rejections;
  resources: ResourceRef[];
};

/**
 * An export request → its accepted spans, each as the bytes it arrived in (`wire`, the protobuf
 * body the request was decoded from; absent for OTLP/JSON, whose spans are encoded here).
 * Only ids and times are checked per span; names, attributes, events and links are bounded when
 * a chunk is read, so a span costs little more than its decoding. Spans with events are turned
 * into records (exceptions are found in them), and so are spans over `MAX_RAW_SPAN_BYTES`,
 * which are stored as their bounded record.
 */
export function acceptSpans(
  request: TraceRequest,
  wire: Uint8Array | undefined,
  now: Date,
  limits: OtlpLimits,
): AcceptedSpans {
  const resources = resourceRefs();
  const rejected = createRejections();
  const spans: EncodedSpan[] = [];
  const withEvents: SpanRecord[] = [];
  const latest = latestEnd(now, limits);
  const ranges = wire ? spanRanges(wire) : [];
  // Decoded spans and wire ranges pair up in order; should they ever not, every span is encoded.
  const raw = wire !== undefined && ranges.length === 2 * spanCount(request);
  let index = 0;
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resourceAttributes = attributesToJson(resourceSpans.resource?.attributes, limits);
    const serviceName = serviceNameOf(resourceAttributes, limits);
    const resource = resources.refOf(resourceAttributes, serviceName);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      const scopeName = cleanText(scopeSpans.scope?.name ?? "", limits.maxNameChars) || null;
      const context: SpanContext = { serviceName, scopeName, resourceAttributes, limits, latest };
      const group: SpanGroupRef = { resource, serviceName, scopeName };
      for (const span of scopeSpans.spans ?? []) {
        const at = 2 * index++;
        const key = checkSpan(span, latest);
        if (typeof key === "string") {
          rejected.add(key);
          continue;
        }
        let record: SpanRecord | undefined;
        if (span.events && span.events.length > 0) {
          record = spanRecordOf(span, context, key);
          withEvents.push(record);
        }
        let bytes =
          raw && wire ? wire.subarray(ranges[at], ranges[at + 1]) : chunkMessages.span.encode(span).finish();
        if (bytes.length > MAX_RAW_SPAN_BYTES) {
          bytes = encodeSpanRecord(record ?? spanRecordOf(span, context, key));
        }
        spans.push({
          traceId: key.traceId,
          spanId: key.spanId,
          startMicros: key.start.micros,
          durationNs: nanosBetween(key.start, key.end),
          statusCode: key.statusCode,
          entry: isEntrySpan(key.kind, key.hasParent),
          group,
          bytes,
        });
      }
    }
  }
  return { spans, withEvents, rejected, resources: resources.all() };
}

/** Records (bounded already) → spans for their chunks, each re-encoded. */
export function encodeRecords(records: SpanRecord[]): { spans: EncodedSpan[]; resources: ResourceRef[] } {
  const resources = resourceRefs();
  const groups = new Map<string, SpanGroupRef>();
  const spans = records.map((r): EncodedSpan => {
    const resource = resources.refOf(r.resourceAttributes, r.serviceName);
    const groupKey = `${resource.id}\u0000${r.serviceName}\u0000${r.scopeName ?? ""}`;
    let group = groups.get(groupKey);
    if (!group) {
      group = { resource, serviceName: r.serviceName, scopeName: r.scopeName };
      groups.set(groupKey, group);
    }
    return {
      traceId: r.traceId,
      spanId: r.spanId,
      startMicros: r.startMicros,
      durationNs: r.durationNs,
      statusCode: r.statusCode,
      entry: isEntrySpan(r.kind, r.parentSpanId !== null),
      group,
      bytes: encodeSpanRecord(r),
    };
  });
  return { spans, resources: resources.all() };
}

function spanCount(request: TraceRequest): number {
  let count = 0;
  for (const resourceSpans of request.resourceSpans ?? []) {
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) count += scopeSpans.spans?.length ?? 0;
  }
  return count;
}
