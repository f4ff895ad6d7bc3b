import { decodeExport } from "./decode-export.ts";
import { type IngestArgs, writeOrUnavailable } from "./ingest-result.ts";
import { OTLP_LIMITS } from "./limits.ts";
import { toMetricPointRecords } from "./metric-records.ts";
import { type IngestResult, ingestResult } from "./rejections.ts";
import { requestKey } from "./request-key.ts";

/**
 * Stores the valid data points of one export request (all of them or none) and reports the rest.
 * Every stored point has its own timestamp, so a request is stored once however often it is sent.
 */
export async function ingestMetrics(args: IngestArgs): Promise<IngestResult> {
  const request = decodeExport("metrics", args.format, args.body);
  const { records, rejected } = toMetricPointRecords(request, args.deps.clock(), OTLP_LIMITS);
  const prepared = args.store.prepareMetricPoints(args.principal, records, {
    requestKey: requestKey("metrics", args.format, args.body),
  });
  const result = ingestResult(records.length, rejected, "data points");
  await writeOrUnavailable(args.deps, args.writer, prepared);
  return result;
}
