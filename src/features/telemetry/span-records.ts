import type { JsonObject, SpanEventJson, SpanLinkJson } from "../../db/schema/telemetry.ts";
import type { OtlpLimits } from "./limits.ts";
import {
  cleanText,
  idToHex,
  isBefore,
  isEmpty,
  isZero,
  type Nanos,
  nanosBetween,
  nanosToString,
  toNanos,
} from "./otlp-scalars.ts";
import type { Span, TraceRequest } from "./otlp-types.ts";
import { attributesToJson, serviceNameOf } from "./otlp-values.ts";
import { createRejections, type Rejections } from "./rejections.ts";
import type { SpanRecord } from "./telemetry-store.ts";

type Context = {
  serviceName: string;
  scopeName: string | null;
  resourceAttributes: JsonObject;
  limits: OtlpLimits;
  latest: Nanos;
};

/**
 * An export request → span records to store, plus the spans refused and why. A span is refused
 * when it cannot be placed in a trace (bad ids) or in time (missing or inverted timestamps, or
 * stamped beyond the allowed clock skew); anything merely oversized is cut down, not refused.
 */
export function toSpanRecords(
  request: TraceRequest,
  now: Date,
  limits: OtlpLimits,
): { records: SpanRecord[]; rejected: Rejections } {
  const records: SpanRecord[] = [];
  const rejected = createRejections();
  const latest: Nanos = { micros: (now.getTime() + limits.maxFutureSkewMs) * 1000, rest: 0 };
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resourceAttributes = attributesToJson(resourceSpans.resource?.attributes, limits);
    const serviceName = serviceNameOf(resourceAttributes, limits);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      const scopeName = cleanText(scopeSpans.scope?.name ?? "", limits.maxNameChars) || null;
      const context: Context = { serviceName, scopeName, resourceAttributes, limits, latest };
      for (const span of scopeSpans.spans ?? []) {
        const record = toSpanRecord(span, context);
        if (typeof record === "string") rejected.add(record);
        else records.push(record);
      }
    }
  }
  return { records, rejected };
}

function toSpanRecord(span: Span, context: Context): SpanRecord | string {
  const { limits } = context;
  const traceId = idToHex(span.traceId, 16);
  if (!traceId) return "trace_id must be 16 bytes and not all zero";
  const spanId = idToHex(span.spanId, 8);
  if (!spanId) return "span_id must be 8 bytes and not all zero";
  const parentSpanId = isEmpty(span.parentSpanId) ? null : idToHex(span.parentSpanId, 8);
  if (parentSpanId === null && !isEmpty(span.parentSpanId)) {
    return "parent_span_id must be empty or 8 bytes and not all zero";
  }
  const start = toNanos(span.startTimeUnixNano);
  const end = toNanos(span.endTimeUnixNano);
  if (isZero(start)) return "start_time_unix_nano is missing";
  if (isBefore(end, start)) return "end_time_unix_nano is before start_time_unix_nano";
  if (isBefore(context.latest, end)) return "timestamps lie more than 24 hours in the future";
  const kind = span.kind ?? 0;
  const statusCode = span.status?.code ?? 0;
  return {
    traceId,
    spanId,
    parentSpanId,
    serviceName: context.serviceName,
    name: cleanText(span.name ?? "", limits.maxNameChars),
    kind: kind >= 0 && kind <= 5 ? kind : 0,
    startMicros: start.micros,
    endMicros: end.micros,
    durationNs: nanosBetween(start, end),
    statusCode: statusCode >= 0 && statusCode <= 2 ? statusCode : 0,
    statusMessage: cleanText(span.status?.message ?? "", limits.maxValueChars) || null,
    scopeName: context.scopeName,
    attributes: attributesToJson(span.attributes, limits),
    resourceAttributes: context.resourceAttributes,
    events: toEvents(span, limits),
    links: toLinks(span, limits),
  };
}

/** Exception events (`exception.type`, `.message`, `.stacktrace`) are kept like any other. */
function toEvents(span: Span, limits: OtlpLimits): SpanEventJson[] {
  // Most spans have none: no arrays to allocate for them (hundreds of thousands a second).
  if (!span.events || span.events.length === 0) return [];
  return span.events.slice(0, limits.maxEvents).map((event) => ({
    name: cleanText(event.name ?? "", limits.maxNameChars),
    timeUnixNano: nanosToString(toNanos(event.timeUnixNano)),
    attributes: attributesToJson(event.attributes, limits),
  }));
}

function toLinks(span: Span, limits: OtlpLimits): SpanLinkJson[] {
  const links: SpanLinkJson[] = [];
  if (!span.links || span.links.length === 0) return links;
  for (const link of span.links ?? []) {
    if (links.length >= limits.maxLinks) break;
    const traceId = idToHex(link.traceId, 16);
    const spanId = idToHex(link.spanId, 8);
    // A link that points nowhere carries no information; it is dropped, the span kept.
    if (traceId && spanId)
      links.push({ traceId, spanId, attributes: attributesToJson(link.attributes, limits) });
  }
  return links;
}
