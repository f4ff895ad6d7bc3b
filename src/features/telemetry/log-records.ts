import type { JsonObject } from "../../platform/db/schema/telemetry.ts";
import type { OtlpLimits } from "./limits.ts";
import { cleanText, dateToNanos, idToHex, isEmpty, nanosToIso, toBigInt } from "./otlp-scalars.ts";
import type { LogRecord, LogsRequest } from "./otlp-types.ts";
import { anyValueToJson, attributesToJson, serviceNameOf } from "./otlp-values.ts";
import { createRejections, type Rejections } from "./rejections.ts";
import type { LogRecordRow } from "./telemetry-records.ts";

type Context = {
  serviceName: string;
  scopeName: string | null;
  resourceAttributes: JsonObject;
  limits: OtlpLimits;
  nowNanos: bigint;
  latestNanos: bigint;
};

/**
 * An export request → log rows, plus the records refused and why. A record is refused for a
 * malformed trace or span id (a present id must be valid; absent ones are fine) or a time beyond
 * the allowed clock skew. A missing time falls back to the observed time, then to now (spec);
 * `untimed` counts the records that had neither.
 */
export function toLogRecords(
  request: LogsRequest,
  now: Date,
  limits: OtlpLimits,
): { records: LogRecordRow[]; rejected: Rejections; untimed: number } {
  const records: LogRecordRow[] = [];
  let untimed = 0;
  const rejected = createRejections();
  const nowNanos = dateToNanos(now);
  const latestNanos = nowNanos + BigInt(limits.maxFutureSkewMs) * 1_000_000n;
  for (const resourceLogs of request.resourceLogs ?? []) {
    const resourceAttributes = attributesToJson(resourceLogs.resource?.attributes, limits);
    const serviceName = serviceNameOf(resourceAttributes, limits);
    for (const scopeLogs of resourceLogs.scopeLogs ?? []) {
      const scopeName = cleanText(scopeLogs.scope?.name ?? "", limits.maxNameChars) || null;
      const context = { serviceName, scopeName, resourceAttributes, limits, nowNanos, latestNanos };
      for (const log of scopeLogs.logRecords ?? []) {
        const record = toLogRecord(log, context);
        if (typeof record === "string") rejected.add(record);
        else {
          records.push(record);
          if (isUntimed(log)) untimed++;
        }
      }
    }
  }
  return { records, rejected, untimed };
}

const isUntimed = (log: LogRecord): boolean =>
  toBigInt(log.timeUnixNano, true) === 0n && toBigInt(log.observedTimeUnixNano, true) === 0n;

function toLogRecord(log: LogRecord, context: Context): LogRecordRow | string {
  const { limits } = context;
  const traceId = isEmpty(log.traceId) ? null : idToHex(log.traceId, 16);
  if (traceId === null && !isEmpty(log.traceId)) return "trace_id must be empty or 16 bytes and not all zero";
  const spanId = isEmpty(log.spanId) ? null : idToHex(log.spanId, 8);
  if (spanId === null && !isEmpty(log.spanId)) return "span_id must be empty or 8 bytes and not all zero";
  let time = toBigInt(log.timeUnixNano, true);
  if (time === 0n) time = toBigInt(log.observedTimeUnixNano, true);
  if (time === 0n) time = context.nowNanos;
  if (time > context.latestNanos) return "time_unix_nano lies more than 24 hours in the future";
  const severity = log.severityNumber ?? 0;
  const body = anyValueToJson(log.body, limits);
  return {
    time: nanosToIso(time),
    severityNumber: severity >= 0 && severity <= 24 ? severity : 0,
    severityText: cleanText(log.severityText ?? "", 64) || null,
    body:
      body === null
        ? null
        : typeof body === "string"
          ? body
          : cleanText(JSON.stringify(body), limits.maxLongValueChars),
    serviceName: context.serviceName,
    traceId,
    spanId,
    eventName: cleanText(log.eventName ?? "", limits.maxNameChars) || null,
    scopeName: context.scopeName,
    attributes: attributesToJson(log.attributes, limits),
    resourceAttributes: context.resourceAttributes,
  };
}
