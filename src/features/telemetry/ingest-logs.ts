import { decodeExport } from "./decode-export.ts";
import { type IngestArgs, writeOrUnavailable } from "./ingest-result.ts";
import { OTLP_LIMITS } from "./limits.ts";
import { toLogRecords } from "./log-records.ts";
import { exceptionsFromLogs } from "./problems/exception-occurrences.ts";
import { identifyOccurrences } from "./problems/identify-occurrences.ts";
import { type IngestResult, ingestResult } from "./rejections.ts";
import { requestKey } from "./request-key.ts";

/**
 * Stores the valid log records of one export request (all of them or none), with the problems
 * their errors belong to, and reports the rest. A request whose records all carry a timestamp is
 * stored once however often it is sent (a retry); one with untimed records each time.
 */
export async function ingestLogs(args: IngestArgs): Promise<IngestResult> {
  const request = decodeExport("logs", args.format, args.body);
  const { records, rejected, untimed } = toLogRecords(request, args.deps.clock(), OTLP_LIMITS);
  const exceptions = identifyOccurrences(exceptionsFromLogs(records));
  const key = untimed === 0 ? requestKey("logs", args.format, args.body) : undefined;
  const prepared = args.store.prepareLogs(args.principal, records, exceptions, { requestKey: key });
  const result = ingestResult(records.length, rejected, "log records");
  await writeOrUnavailable(args.deps, args.writer, prepared);
  return result;
}
