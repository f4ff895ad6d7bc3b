import protojson from "protobufjs/ext/protojson.js";
import { AppError } from "../../errors.ts";
import { otlpMessages, type Signal } from "./otlp-schema.ts";
import type { LogsRequest, MetricsRequest, TraceRequest } from "./otlp-types.ts";
import { RefusedBody, type ScannedTraces, scanTraces } from "./wire/scan-traces.ts";

export type OtlpFormat = "protobuf" | "json";

export type ExportRequests = { traces: TraceRequest; logs: LogsRequest; metrics: MetricsRequest };

/** Decoder messages can quote the offending input; keep what we echo short. */
const MAX_ERROR_CHARS = 300;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * An export request body → the decoded message, or `invalid_request` (400). Both decoders are
 * strict and cap nesting at protobufjs's recursion limit (100); unknown fields are ignored, as
 * the specification requires of receivers.
 */
export function decodeExport<S extends Signal>(
  signal: S,
  format: OtlpFormat,
  body: Uint8Array,
): ExportRequests[S] {
  const type = otlpMessages[signal].request;
  try {
    if (format === "protobuf") return type.decode(body) as unknown as ExportRequests[S];
    const document: unknown = JSON.parse(utf8.decode(body));
    hexIdsToBase64(signal, document);
    return protojson.fromJson(type, document, { ignoreUnknownFields: true }) as unknown as ExportRequests[S];
  } catch (error) {
    throw invalidBody(signal, format, error);
  }
}

/** A protobuf trace export body → its spans scanned, not decoded (wire/): `decodeExport`'s verdict. */
export function scanTraceExport(body: Uint8Array): ScannedTraces {
  try {
    return scanTraces(body);
  } catch (error) {
    throw error instanceof RefusedBody ? invalidBody("traces", "protobuf", error) : error;
  }
}

function invalidBody(signal: Signal, format: OtlpFormat, error: unknown): AppError {
  const reason = error instanceof Error ? error.message : String(error);
  const short = reason.length > MAX_ERROR_CHARS ? `${reason.slice(0, MAX_ERROR_CHARS)}…` : reason;
  return new AppError(
    "invalid_request",
    `The body is not a valid ${format === "json" ? "OTLP/JSON" : "OTLP protobuf"} ${otlpMessages[signal].request.name}: ${short}`,
  );
}

/**
 * OTLP/JSON's one departure from the protobuf JSON mapping: trace and span ids are hex, not
 * base64. They are rewritten in place (under either field name) before the standard parser
 * reads the document; unknown shapes are left for it to refuse. A string that is not hex becomes
 * a one-byte id, so only its item is rejected (partial success), not the request.
 */
export function hexIdsToBase64(signal: Signal, document: unknown): void {
  if (signal === "traces") {
    for (const span of items(document, ["resourceSpans", "scopeSpans", "spans"])) {
      rewrite(span, ["traceId", "spanId", "parentSpanId"]);
      for (const link of list(field(span, "links"))) rewrite(link, ["traceId", "spanId"]);
    }
  } else if (signal === "logs") {
    for (const log of items(document, ["resourceLogs", "scopeLogs", "logRecords"]))
      rewrite(log, ["traceId", "spanId"]);
  } else {
    for (const metric of items(document, ["resourceMetrics", "scopeMetrics", "metrics"])) {
      for (const kind of ["gauge", "sum", "histogram", "exponentialHistogram", "exponential_histogram"]) {
        for (const point of list(field(field(metric, kind), "dataPoints"))) {
          for (const exemplar of list(field(point, "exemplars"))) rewrite(exemplar, ["traceId", "spanId"]);
        }
      }
    }
  }
}

const hex = /^(?:[0-9a-fA-F]{2})*$/;
const NOT_AN_ID = "AA==";

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function rewrite(target: unknown, names: string[]): void {
  if (!isObject(target)) return;
  for (const name of names) {
    for (const key of [name, snake(name)]) {
      const value = target[key];
      if (typeof value !== "string") continue;
      target[key] = hex.test(value) ? Buffer.from(value, "hex").toString("base64") : NOT_AN_ID;
    }
  }
}

/** Walks a path of repeated fields, each under its lowerCamelCase or original name. */
function items(document: unknown, path: string[]): Record<string, unknown>[] {
  let level: unknown[] = [document];
  for (const name of path) level = level.flatMap((node) => list(field(node, name)));
  return level.filter(isObject);
}

function field(node: unknown, name: string): unknown {
  if (!isObject(node)) return undefined;
  return node[name] ?? node[snake(name)];
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
