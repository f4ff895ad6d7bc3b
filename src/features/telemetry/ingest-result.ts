import { AppError } from "../../errors.ts";
import type { Logger } from "../../platform/logging/logger.ts";
import type { IngestPrincipal } from "../publishable-keys/resolve-publishable-key.ts";
import type { ConversionPool } from "./conversion/conversion-pool.ts";
import type { OtlpFormat } from "./decode-export.ts";
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

/** Seconds an exporter should wait before retrying when storage failed. */
const STORAGE_RETRY_AFTER_SECONDS = 5;

/**
 * Runs a prepared write on a free writer; a failure is logged and becomes `service_unavailable`
 * (503, retryable with Retry-After): the data was valid, so the exporter should send it again,
 * not drop it.
 */
export async function writeOrUnavailable(
  deps: { logger: Logger },
  writer: IngestArgs["writer"],
  prepared: PreparedWrite,
): Promise<void> {
  try {
    await writer(() => prepared.write());
  } catch (err) {
    deps.logger.error({ err }, "telemetry write failed");
    throw new AppError("service_unavailable", "Telemetry storage is unavailable right now; retry later.", {
      retryAfterSeconds: STORAGE_RETRY_AFTER_SECONDS,
    });
  }
}
