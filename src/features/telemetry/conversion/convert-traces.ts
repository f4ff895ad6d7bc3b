import { decodeExport, type OtlpFormat, scanTraceExport } from "../decode-export.ts";
import { OTLP_LIMITS } from "../limits.ts";
import { exceptionsFromSpans } from "../problems/exception-occurrences.ts";
import type { ProblemOccurrence } from "../problems/fingerprint.ts";
import { identifyOccurrences } from "../problems/fingerprint.ts";
import { type IngestResult, ingestResult } from "../rejections.ts";
import { encodeSpanRows, type SpanRows } from "../storage/span-chunks.ts";
import { acceptSpans, decodedSpans, wireSpans } from "../storage/stored-spans.ts";
import type { TelemetryTenant } from "../telemetry-records.ts";

/** One trace export request as a conversion worker receives it. */
export type TraceConversion = {
  tenant: TelemetryTenant;
  format: OtlpFormat;
  /** The decompressed body, within the limits (read-body.ts). */
  body: Uint8Array;
  /** The ingesting process's clock: the upper bound on timestamps derives from it. */
  nowMs: number;
};

/** Everything but the write: the rows to COPY, the problems' occurrences, the answer. */
export type ConvertedTraces = { rows: SpanRows; exceptions: ProblemOccurrence[]; result: IngestResult };

/**
 * The CPU-bound part of trace ingest — decode, check the spans, find and fingerprint their
 * exceptions, encode the rows — as one pure function of plain data, so that it can run on a
 * worker thread (conversion-pool.ts) as well as inline. A body that does not decode throws
 * `invalid_request`. Protobuf bodies are scanned, not decoded: their spans are stored as the bytes
 * they came in (wire/scan-traces.ts, storage/stored-spans.ts).
 */
export function convertTraces(input: TraceConversion): ConvertedTraces {
  const now = new Date(input.nowMs);
  const accepted =
    input.format === "protobuf"
      ? acceptSpans(wireSpans(scanTraceExport(input.body)), now, OTLP_LIMITS)
      : acceptSpans(decodedSpans(decodeExport("traces", "json", input.body)), now, OTLP_LIMITS);
  const exceptions = identifyOccurrences(exceptionsFromSpans(accepted.withEvents));
  return {
    rows: encodeSpanRows(input.tenant, accepted.spans, accepted.resources),
    exceptions,
    result: ingestResult(accepted.spans.length, accepted.rejected, "spans"),
  };
}
