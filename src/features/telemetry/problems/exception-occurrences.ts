import type { JsonObject } from "../../../platform/db/schema/telemetry.ts";
import { microsToIso } from "../otlp-scalars.ts";
import type { LogRecordRow, SpanRecord } from "../telemetry-records.ts";

/** One observed exception, as problem grouping consumes it. */
export type ExceptionOccurrence = {
  /** A span's exception event, or a log record (which may be evidence on its span's problem). */
  source: "span" | "log";
  service: string;
  type: string;
  message: string;
  stacktrace: string | null;
  traceId: string | null;
  spanId: string | null;
  /** ISO 8601. */
  time: string;
};

const text = (attributes: JsonObject, key: string): string | null => {
  const value = attributes[key];
  return typeof value === "string" && value !== "" ? value : null;
};

/**
 * Exception span events (semantic conventions: an event named `exception` with `exception.type`
 * and/or `exception.message`, optionally `exception.stacktrace`).
 */
export function exceptionsFromSpans(spans: SpanRecord[]): ExceptionOccurrence[] {
  const out: ExceptionOccurrence[] = [];
  for (const span of spans) {
    for (const event of span.events) {
      if (event.name !== "exception") continue;
      const type = text(event.attributes, "exception.type");
      const message = text(event.attributes, "exception.message");
      if (!type && !message) continue;
      const nanos = BigInt(event.timeUnixNano);
      out.push({
        source: "span",
        service: span.serviceName,
        type: type ?? "Error",
        message: message ?? "",
        stacktrace: text(event.attributes, "exception.stacktrace"),
        traceId: span.traceId,
        spanId: span.spanId,
        time:
          nanos > 0n
            ? new Date(Number(nanos / 1_000_000n)).toISOString()
            : microsToIso({ micros: span.startMicros, rest: 0 }),
      });
    }
  }
  return out;
}

/** Severity numbers 17–24 are ERROR and FATAL. */
const ERROR_SEVERITY = 17;

/**
 * Error logs: a record carrying `exception.*` attributes (an exception logged with the semantic
 * conventions), or any record at ERROR or FATAL severity — then typed by its severity, with the
 * body as message.
 */
export function exceptionsFromLogs(logs: LogRecordRow[]): ExceptionOccurrence[] {
  const out: ExceptionOccurrence[] = [];
  for (const log of logs) {
    const type = text(log.attributes, "exception.type");
    const message = text(log.attributes, "exception.message");
    if (!type && !message && log.severityNumber < ERROR_SEVERITY) continue;
    out.push({
      source: "log",
      service: log.serviceName,
      type: type ?? (log.severityNumber >= 21 ? "FATAL log" : "ERROR log"),
      message: message ?? log.body ?? "",
      stacktrace: text(log.attributes, "exception.stacktrace"),
      traceId: log.traceId,
      spanId: log.spanId,
      time: log.time,
    });
  }
  return out;
}
