import { type IngestArgs, type IngestResult, ingestResult, writeOrUnavailable } from "./ingest-result.ts";
import { OTLP_LIMITS } from "./limits.ts";
import type { TraceRequest } from "./otlp-types.ts";
import { exceptionsFromSpans } from "./problems/exception-occurrences.ts";
import { identifyOccurrences } from "./problems/group-occurrences.ts";
import { toSpanRecords } from "./span-records.ts";

/**
 * Stores the valid spans of one export request (all of them or none), with the problems their
 * exception events belong to, and reports the rest. Everything but the write happens before the
 * batch waits for a writer, so the request and its records are garbage by then.
 */
export async function ingestTraces(args: IngestArgs<TraceRequest>): Promise<IngestResult> {
  const { records, rejected } = toSpanRecords(args.request, args.deps.clock(), OTLP_LIMITS);
  const exceptions = identifyOccurrences(exceptionsFromSpans(records));
  const prepared = args.store.prepareSpans(args.principal, records, exceptions);
  const result = ingestResult(records.length, rejected, "spans");
  await writeOrUnavailable(args.deps, args.writer, prepared);
  return result;
}
