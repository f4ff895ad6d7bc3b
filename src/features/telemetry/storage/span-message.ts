import type { JsonObject, JsonValue } from "../../../platform/db/schema/telemetry.ts";
import { chunkMessages } from "../otlp-schema.ts";
import type { AnyValue, KeyValue } from "../otlp-types.ts";
import type { SpanRecord } from "../telemetry-records.ts";

/**
 * A span record (already bounded) back to an encoded OTLP `Span`, for spans that are not stored
 * as the exporter's bytes: those over the raw-size limit and records written directly (tests,
 * the store's `prepareSpans`). Reading the result (`toSpanRecord`) gives the record again: the
 * attribute JSON maps back to values that convert to the same JSON (integers within 2^53 as
 * intValue, other numbers as doubleValue, arrays and objects as arrayValue and kvlistValue), and
 * applying the bounds to bounded data changes nothing (tested in stored-spans.test.ts).
 */
export function encodeSpanRecord(record: SpanRecord): Uint8Array {
  const { span } = chunkMessages;
  const start = BigInt(record.startMicros) * 1000n + BigInt(subMicroOffset(record));
  const message = span.fromObject({
    traceId: Buffer.from(record.traceId, "hex"),
    spanId: Buffer.from(record.spanId, "hex"),
    parentSpanId: record.parentSpanId === null ? undefined : Buffer.from(record.parentSpanId, "hex"),
    name: record.name,
    kind: record.kind,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + BigInt(record.durationNs)).toString(),
    attributes: toKeyValues(record.attributes),
    events: record.events.map((event) => ({
      name: event.name,
      timeUnixNano: event.timeUnixNano,
      attributes: toKeyValues(event.attributes),
    })),
    links: record.links.map((link) => ({
      traceId: Buffer.from(link.traceId, "hex"),
      spanId: Buffer.from(link.spanId, "hex"),
      attributes: toKeyValues(link.attributes),
    })),
    status: { code: record.statusCode, message: record.statusMessage ?? "" },
  });
  return span.encode(message).finish();
}

/**
 * A record keeps its start and end in whole microseconds and its duration in nanoseconds; the
 * nanoseconds of the start past its microsecond are chosen so that start + duration falls in
 * the recorded end microsecond again (0 when the record's times are already consistent that way).
 */
function subMicroOffset(record: SpanRecord): number {
  const offset = (record.endMicros - record.startMicros) * 1000 - record.durationNs;
  return Math.min(999, Math.max(0, offset));
}

function toKeyValues(object: JsonObject): KeyValue[] {
  return Object.entries(object).map(([key, value]) => ({ key, value: toAnyValue(value) }));
}

function toAnyValue(value: JsonValue): AnyValue {
  if (value === null) return {};
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number") {
    return Number.isSafeInteger(value) ? { intValue: value } : { doubleValue: value };
  }
  if (Array.isArray(value)) return { arrayValue: { values: value.map(toAnyValue) } };
  return { kvlistValue: { values: toKeyValues(value) } };
}
