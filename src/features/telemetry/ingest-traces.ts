import { type IngestArgs, type IngestResult, ingestResult, writeOrUnavailable } from "./ingest-result.ts";
import { OTLP_LIMITS } from "./limits.ts";
import type { TraceRequest } from "./otlp-types.ts";
import { toSpanRecords } from "./span-records.ts";

/** Stores the valid spans of one export request (all of them or none) and reports the rest. */
export async function ingestTraces(args: IngestArgs<TraceRequest>): Promise<IngestResult> {
  const { records, rejected } = toSpanRecords(args.request, args.deps.clock(), OTLP_LIMITS);
  await writeOrUnavailable(args.deps, () => args.store.writeSpans(args.principal, records));
  return ingestResult(records.length, rejected, "spans");
}
