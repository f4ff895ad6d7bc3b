import { decodeExport } from "./decode-export.ts";
import { type IngestArgs, type IngestResult, ingestResult, writeOrUnavailable } from "./ingest-result.ts";
import { OTLP_LIMITS } from "./limits.ts";
import { toMetricPointRecords } from "./metric-records.ts";

/** Stores the valid data points of one export request (all of them or none) and reports the rest. */
export async function ingestMetrics(args: IngestArgs): Promise<IngestResult> {
  const request = decodeExport("metrics", args.format, args.body);
  const { records, rejected } = toMetricPointRecords(request, args.deps.clock(), OTLP_LIMITS);
  const prepared = args.store.prepareMetricPoints(args.principal, records);
  const result = ingestResult(records.length, rejected, "data points");
  await writeOrUnavailable(args.deps, args.writer, prepared);
  return result;
}
