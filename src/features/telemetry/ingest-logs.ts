import { type IngestArgs, type IngestResult, ingestResult, writeOrUnavailable } from "./ingest-result.ts";
import { OTLP_LIMITS } from "./limits.ts";
import { toLogRecords } from "./log-records.ts";
import type { LogsRequest } from "./otlp-types.ts";

/** Stores the valid log records of one export request (all of them or none) and reports the rest. */
export async function ingestLogs(args: IngestArgs<LogsRequest>): Promise<IngestResult> {
  const { records, rejected } = toLogRecords(args.request, args.deps.clock(), OTLP_LIMITS);
  await writeOrUnavailable(args.deps, () => args.store.writeLogs(args.principal, records));
  return ingestResult(records.length, rejected, "log records");
}
