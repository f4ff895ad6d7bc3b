import protojson from "protobufjs/ext/protojson.js";
import { AppError } from "../../errors.ts";
import { hexIdsToBase64 } from "./otlp-json.ts";
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
 * strict (truncated protobuf, wrong wire or JSON types, invalid UTF-8 in JSON) and cap nesting
 * at protobufjs's recursion limit (100), so a deeply nested value cannot exhaust the stack.
 * Unknown fields are ignored, as the specification requires of receivers.
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

/**
 * A protobuf trace export body → its spans scanned, not decoded (wire/scan-traces.ts): the same
 * verdict as `decodeExport`, `invalid_request` when refused (the reason's wording may differ).
 */
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
