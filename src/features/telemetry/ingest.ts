import { createHash } from "node:crypto";
import { AppError } from "../../errors.ts";
import type { Logger } from "../../platform/logging/logger.ts";
import type { IngestPrincipal } from "../publishable-keys/index.ts";
import type { ConversionPool } from "./conversion/conversion-pool.ts";
import { decodeExport, type OtlpFormat } from "./decode-export.ts";
import { OTLP_LIMITS } from "./limits.ts";
import { toLogRecords } from "./log-records.ts";
import { toMetricPointRecords } from "./metric-records.ts";
import type { Signal } from "./otlp-schema.ts";
import { exceptionsFromLogs } from "./problems/exception-occurrences.ts";
import { identifyOccurrences } from "./problems/fingerprint.ts";
import { type IngestResult, ingestResult } from "./rejections.ts";
import type { PreparedWrite, TelemetryStore } from "./telemetry-store.ts";

export type IngestArgs = {
  deps: { clock: () => Date; logger: Logger };
  store: TelemetryStore;
  /** Where trace bodies are decoded and encoded (worker threads, or inline). */
  conversion: ConversionPool;
  principal: IngestPrincipal;
  format: OtlpFormat;
  /** The export request body, decompressed and within the limits (read-body.ts). */
  body: Uint8Array;
  /** Runs the storage write once a writer is free (the write queue's `run`). */
  writer: <T>(write: () => Promise<T>) => Promise<T>;
};

/**
 * Stores the valid items of one export request (all of them or none), with the problems their
 * exceptions belong to, and reports the rest.
 */
export const ingest: Record<Signal, (args: IngestArgs) => Promise<IngestResult>> = {
  /**
   * Decoding, validation, grouping and the COPY encoding run on a conversion thread; this thread
   * keeps only the write. Span writes skip the writer slots: the store gathers concurrent ones
   * into shared transactions and bounds those itself (storage/span-batches.ts), so a slot would
   * only keep requests from joining a batch.
   */
  async traces(args) {
    const { organizationId, environmentId } = args.principal;
    const tenant = { organizationId, environmentId };
    const converted = await args.conversion.convertTraces({
      tenant,
      format: args.format,
      body: args.body,
      nowMs: args.deps.clock().getTime(),
    });
    const prepared = args.store.prepareSpanRows(tenant, converted.rows, converted.exceptions);
    await writeOrUnavailable(args, (write) => write(), prepared);
    return converted.result;
  },

  /** Stored once however often it is sent (a retry), unless a record is untimed. */
  async logs(args) {
    const request = decodeExport("logs", args.format, args.body);
    const { records, rejected, untimed } = toLogRecords(request, args.deps.clock(), OTLP_LIMITS);
    const exceptions = identifyOccurrences(exceptionsFromLogs(records));
    const key = untimed === 0 ? requestKey("logs", args) : undefined;
    const prepared = args.store.prepareLogs(args.principal, records, exceptions, key);
    const result = ingestResult(records.length, rejected, "log records");
    await writeOrUnavailable(args, args.writer, prepared);
    return result;
  },

  /** Every stored point has its own timestamp: a request is stored once however often it is sent. */
  async metrics(args) {
    const request = decodeExport("metrics", args.format, args.body);
    const { records, rejected } = toMetricPointRecords(request, args.deps.clock(), OTLP_LIMITS);
    const prepared = args.store.prepareMetricPoints(args.principal, records, requestKey("metrics", args));
    const result = ingestResult(records.length, rejected, "data points");
    await writeOrUnavailable(args, args.writer, prepared);
    return result;
  },
};

/**
 * A log or metric export request's identity, to recognise an exporter's retry: 128 bits of
 * SHA-256 over the signal, the format and the decompressed body (a retry re-sends the same
 * serialised request; its compression may differ).
 */
const requestKey = (signal: Signal, { format, body }: IngestArgs): string =>
  createHash("sha256").update(`${signal}/${format}/`).update(body).digest("hex").slice(0, 32);

/** Seconds an exporter should wait before retrying when storage failed. */
const STORAGE_RETRY_AFTER_SECONDS = 5;

/**
 * Runs a prepared write on a free writer; a failure is logged and becomes `service_unavailable`
 * (503 with Retry-After): the data was valid, so the exporter should send it again, not drop it.
 */
async function writeOrUnavailable(
  args: IngestArgs,
  writer: IngestArgs["writer"],
  prepared: PreparedWrite,
): Promise<void> {
  try {
    await writer(() => prepared.write());
  } catch (err) {
    args.deps.logger.error({ err }, "telemetry write failed");
    throw new AppError("service_unavailable", "Telemetry storage is unavailable right now; retry later.", {
      retryAfterSeconds: STORAGE_RETRY_AFTER_SECONDS,
    });
  }
}
