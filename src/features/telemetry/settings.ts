import { availableParallelism } from "node:os";
import type { Config } from "../../config.ts";
import { DEFERRED_LOG_WAIT_MS } from "./problems/record-problems.ts";

export type TelemetrySettings = ReturnType<typeof telemetrySettings>;

/**
 * Telemetry settings: the retention from configuration (`PATCHBAY_TELEMETRY_RETENTION_DAYS`,
 * src/config.ts), the rest fixed — they bound memory and writer concurrency, not policy.
 */
export function telemetrySettings(config: Pick<Config, "telemetry">) {
  return {
    /** Rows older than this are deleted by the retention sweep. */
    retentionDays: config.telemetry.retentionDays,
    sweepEveryMs: 60 * 60 * 1000,
    /** Error logs waiting for their span's exception are grouped this often once due. */
    deferredLogs: { waitMs: DEFERRED_LOG_WAIT_MS, everyMs: 10_000 },
    /**
     * Concurrent log and metric writes (transactions). The store bounds span writes itself, two
     * transactions at a time (storage/span-batches.ts).
     */
    writers: 4,
    /** Requests admitted at once (reading, decoding, waiting for or holding a writer). */
    maxQueuedRequests: 32,
    /** Decoded payload bytes admitted at once. */
    maxQueuedBytes: 64 * 1024 * 1024,
    /**
     * Worker threads decoding and encoding trace bodies (0: on the serving thread): one per core,
     * at most two. With two cores, a second thread took full ingest from 50–58k to 63–74k spans/s
     * for ~200 MiB more peak RSS; beyond two, threads mostly compete with the serving thread and
     * a local database (docs/performance.md, "bench:ingest").
     */
    conversionThreads: Math.min(2, Math.max(1, availableParallelism())),
  };
}
