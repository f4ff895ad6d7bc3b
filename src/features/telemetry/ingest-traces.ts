import { type IngestArgs, writeOrUnavailable } from "./ingest-result.ts";
import type { IngestResult } from "./rejections.ts";

/**
 * Stores the valid spans of one export request (all of them or none), with the problems their
 * exception events belong to, and reports the rest. Decoding, validation, grouping and the COPY
 * encoding run on a conversion thread (conversion/); this thread keeps only the write, which waits
 * holding nothing but the encoded bytes. Span writes skip the writer slots logs and metrics take:
 * the store gathers concurrent ones into shared transactions and bounds those itself
 * (storage/span-batches.ts), so a slot would only keep requests from joining a batch.
 */
export async function ingestTraces(args: IngestArgs): Promise<IngestResult> {
  const { principal } = args;
  const tenant = { organizationId: principal.organizationId, environmentId: principal.environmentId };
  const converted = await args.conversion.convertTraces({
    tenant,
    format: args.format,
    body: args.body,
    nowMs: args.deps.clock().getTime(),
  });
  const prepared = args.store.prepareSpanRows(tenant, converted.rows, converted.exceptions);
  await writeOrUnavailable(args.deps, (write) => write(), prepared);
  return converted.result;
}
