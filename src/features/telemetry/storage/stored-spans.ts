import type { OtlpLimits } from "../limits.ts";
import { cleanText, nanosBetween } from "../otlp-scalars.ts";
import { chunkMessages } from "../otlp-schema.ts";
import type { Resource, Scope, Span, TraceRequest } from "../otlp-types.ts";
import { attributesToJson, serviceNameOf } from "../otlp-values.ts";
import { createRejections, type Rejections } from "../rejections.ts";
import {
  checkSpan,
  isEntrySpan,
  latestEnd,
  type SpanContext,
  type SpanKeyFields,
  spanRecordOf,
} from "../span-records.ts";
import type { SpanRecord } from "../telemetry-records.ts";
import { decodeSpan, type ScannedTraces, type WireSpan } from "../wire/scan-traces.ts";
import { type ResourceRef, resourceRefs } from "./resources.ts";
import { encodeSpanRecord } from "./span-message.ts";

/**
 * A span above this many bytes is stored re-encoded from its bounded record, not as the
 * exporter's bytes, so a chunk's spans stay bounded. SDK spans are ~0.2–2 KiB, a few with a stack.
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

/** Spans decoded whole (OTLP/JSON) or scanned from a protobuf body (wire/scan-traces.ts). */
type SpanSource<S extends SpanKeyFields> = {
  resourceSpans: { resource?: Resource; scopeSpans?: { scope?: Scope; spans?: S[] }[] }[] | undefined;
  hasEvents(span: S): boolean;
  decoded(span: S): Span;
  /** The OTLP `Span` message. */
  bytes(span: S): Uint8Array;
};

/** A protobuf body's spans: their bytes are the exporter's. */
export const wireSpans = (scanned: ScannedTraces): SpanSource<WireSpan> => ({
  resourceSpans: scanned.resourceSpans,
  hasEvents: (span) => span.hasEvents,
  decoded: (span) => decodeSpan(scanned, span),
  bytes: (span) => scanned.body.subarray(span.start, span.end),
});

/** Decoded spans (OTLP/JSON): each is encoded as a `Span` message. */
export const decodedSpans = (request: TraceRequest): SpanSource<Span> => ({
  resourceSpans: request.resourceSpans,
  hasEvents: (span) => (span.events?.length ?? 0) > 0,
  decoded: (span) => span,
  bytes: (span) => chunkMessages.span.encode(span).finish(),
});

/**
 * An export request's spans → the accepted ones, each as its `Span` message. Only ids and times
 * are checked here; the rest is bounded when a chunk is read. Spans with events (exceptions are
 * found in them) and spans over `MAX_RAW_SPAN_BYTES` are decoded into records.
 */
export function acceptSpans<S extends SpanKeyFields>(
  source: SpanSource<S>,
  now: Date,
  limits: OtlpLimits,
): AcceptedSpans {
  const resources = resourceRefs();
  const rejected = createRejections();
  const spans: EncodedSpan[] = [];
  const withEvents: SpanRecord[] = [];
  const latest = latestEnd(now, limits);
  for (const resourceSpans of source.resourceSpans ?? []) {
    const resourceAttributes = attributesToJson(resourceSpans.resource?.attributes, limits);
    const serviceName = serviceNameOf(resourceAttributes, limits);
    const resource = resources.refOf(resourceAttributes, serviceName);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      const scopeName = cleanText(scopeSpans.scope?.name ?? "", limits.maxNameChars) || null;
      const context: SpanContext = { serviceName, scopeName, resourceAttributes, limits, latest };
      const group: SpanGroupRef = { resource, serviceName, scopeName };
      for (const span of scopeSpans.spans ?? []) {
        const key = checkSpan(span, latest);
        if (typeof key === "string") {
          rejected.add(key);
          continue;
        }
        let record: SpanRecord | undefined;
        if (source.hasEvents(span)) {
          record = spanRecordOf(source.decoded(span), context, key);
          withEvents.push(record);
        }
        let bytes = source.bytes(span);
        if (bytes.length > MAX_RAW_SPAN_BYTES) {
          bytes = encodeSpanRecord(record ?? spanRecordOf(source.decoded(span), context, key));
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
