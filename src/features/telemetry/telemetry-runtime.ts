import type { DatabaseHandle } from "../../platform/db/client.ts";
import type { Logger } from "../../platform/logging/logger.ts";
import { type ConversionPool, createConversionPool } from "./conversion/conversion-pool.ts";
import { createPostgresTelemetryStore } from "./postgres-telemetry-store.ts";
import type { TelemetrySettings } from "./settings.ts";
import type { TelemetryStore } from "./telemetry-store.ts";
import { createWriteQueue, type WriteQueue } from "./write-queue.ts";

/** The store, the bounded write queue and the conversion threads that OTLP ingest runs through. */
export type IngestPipeline = { store: TelemetryStore; queue: WriteQueue; conversion: ConversionPool };

/** `close` stops the retention timer and terminates the conversion threads. */
export type TelemetryRuntime = IngestPipeline & { close(): Promise<void> };

/**
 * Built once with the deps (per process in production, per test file in tests): every app built
 * on them shares one queue, whose bounds are then real, one retention timer and one set of
 * conversion threads (started on first use).
 */
export function createTelemetryRuntime(args: {
  database: DatabaseHandle;
  logger: Logger;
  clock: () => Date;
  settings: TelemetrySettings;
}): TelemetryRuntime {
  const { settings, logger } = args;
  const store = createPostgresTelemetryStore({
    ...args,
    retention: { days: settings.retentionDays, sweepEveryMs: settings.sweepEveryMs },
    deferredLogs: settings.deferredLogs,
  });
  const conversion = createConversionPool({
    threads: settings.conversionThreads,
    // Every conversion belongs to an admitted request: this bound is only a backstop.
    maxPending: settings.maxQueuedRequests,
    logger,
  });
  const queue = createWriteQueue({
    maxRequests: settings.maxQueuedRequests,
    maxBytes: settings.maxQueuedBytes,
    writers: settings.writers,
  });
  return {
    store,
    queue,
    conversion,
    async close() {
      store.close();
      await conversion.close();
    },
  };
}
