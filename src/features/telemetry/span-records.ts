import type { JsonObject, SpanEventJson, SpanLinkJson } from "../../platform/db/schema/telemetry.ts";
import type { OtlpLimits } from "./limits.ts";
import {
  cleanText,
  idToHex,
  isBefore,
  isEmpty,
  isValidId,
  isZero,
  type Nanos,
  nanosBetween,
  nanosToString,
  toNanos,
} from "./otlp-scalars.ts";
import type { Span } from "./otlp-types.ts";
import { attributesToJson } from "./otlp-values.ts";
import type { SpanRecord } from "./telemetry-records.ts";

/** Where a span sits (its resource and scope, already bounded) and the bounds to apply. */
export type SpanContext = {
  serviceName: string;
  scopeName: string | null;
  resourceAttributes: JsonObject;
  limits: OtlpLimits;
  /** Spans ending after this are refused (clock skew); `NO_LATEST` when reading stored spans. */
  latest: Nanos;
};

/** No upper bound on timestamps: for spans read back from storage, checked when they came in. */
export const NO_LATEST: Nanos = { micros: Number.POSITIVE_INFINITY, rest: 0 };

/** What placing a span needs: its ids and times, checked. Cheap — no text or attribute work. */
export type SpanKey = {
  traceId: string;
  spanId: string;
  /** Whether it has a (valid) parent span id; `spanRecordOf` spells it out, most callers need not. */
  hasParent: boolean;
  start: Nanos;
  end: Nanos;
  /** 0–5; anything else is 0 (unspecified). */
  kind: number;
  /** 0–2; anything else is 0 (unset). */
  statusCode: number;
};

/** The latest end a span may have, `now` plus the allowed clock skew. */
export const latestEnd = (now: Date, limits: OtlpLimits): Nanos => ({
  micros: (now.getTime() + limits.maxFutureSkewMs) * 1000,
  rest: 0,
});

/** Server and consumer spans, and roots: the requests a service handled (service health). */
export const isEntrySpan = (kind: number, hasParent: boolean): boolean =>
  kind === 2 || kind === 5 || !hasParent;

/** The fields `checkSpan` reads: all a span's wire scan needs to give (wire/scan-traces.ts). */
export type SpanKeyFields = Pick<
  Span,
  "traceId" | "spanId" | "parentSpanId" | "kind" | "startTimeUnixNano" | "endTimeUnixNano" | "status"
>;

/** A span's ids and times, or why it cannot be placed in a trace or in time. */
export function checkSpan(span: SpanKeyFields, latest: Nanos): SpanKey | string {
  const traceId = idToHex(span.traceId, 16);
  if (!traceId) return "trace_id must be 16 bytes and not all zero";
  const spanId = idToHex(span.spanId, 8);
  if (!spanId) return "span_id must be 8 bytes and not all zero";
  const hasParent = !isEmpty(span.parentSpanId);
  if (hasParent && !isValidId(span.parentSpanId, 8)) {
    return "parent_span_id must be empty or 8 bytes and not all zero";
  }
  const start = toNanos(span.startTimeUnixNano);
  const end = toNanos(span.endTimeUnixNano);
  if (isZero(start)) return "start_time_unix_nano is missing";
  if (isBefore(end, start)) return "end_time_unix_nano is before start_time_unix_nano";
  if (isBefore(latest, end)) return "timestamps lie more than 24 hours in the future";
  const kind = span.kind ?? 0;
  const statusCode = span.status?.code ?? 0;
  return {
    traceId,
    spanId,
    hasParent,
    start,
    end,
    kind: kind >= 0 && kind <= 5 ? kind : 0,
    statusCode: statusCode >= 0 && statusCode <= 2 ? statusCode : 0,
  };
}

/** One span → its record, bounded; a string says why it is refused (`checkSpan`). */
export function toSpanRecord(span: Span, context: SpanContext): SpanRecord | string {
  const key = checkSpan(span, context.latest);
  return typeof key === "string" ? key : spanRecordOf(span, context, key);
}

/** A checked span (`checkSpan`) → its record: text cut, attributes, events and links bounded. */
export function spanRecordOf(span: Span, context: SpanContext, key: SpanKey): SpanRecord {
  const { limits } = context;
  return {
    traceId: key.traceId,
    spanId: key.spanId,
    parentSpanId: key.hasParent ? idToHex(span.parentSpanId, 8) : null,
    serviceName: context.serviceName,
    name: cleanText(span.name ?? "", limits.maxNameChars),
    kind: key.kind,
    startMicros: key.start.micros,
    endMicros: key.end.micros,
    durationNs: nanosBetween(key.start, key.end),
    statusCode: key.statusCode,
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
