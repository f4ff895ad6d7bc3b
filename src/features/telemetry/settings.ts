import { availableParallelism } from "node:os";
import type { Config } from "../../config.ts";

/**
 * One conversion thread per core, at least one and at most two. The serving thread mostly waits
 * (about a third of a core in bench:ingest) and the database's share of a stored span shrank when
 * spans went into trace chunks, so with two cores the conversion itself became the bottleneck: a
 * second thread took full ingest from 50–58k to 63–74k spans/s in interleaved runs, for ~200 MiB
 * more peak RSS under full load (docs/performance.md, "bench:ingest"). Beyond two, threads mostly compete
 * with the serving thread and a local database.
 */
const CONVERSION_THREADS = Math.min(2, Math.max(1, availableParallelism()));

export type TelemetrySettings = {
  /** Rows older than this are deleted by the retention sweep. */
  retentionDays: number;
  sweepEveryMs: number;
  /**
   * Concurrent log and metric writes (transactions). Span writes are bounded by the store, which
   * commits concurrent ones together, two transactions at a time (storage/span-batches.ts).
   */
  writers: number;
  /** Requests admitted at once (reading, decoding, waiting for or holding a writer). */
  maxQueuedRequests: number;
  /** Decoded payload bytes admitted at once. */
  maxQueuedBytes: number;
  /** Worker threads decoding and encoding trace bodies (0: on the serving thread). */
  conversionThreads: number;
};

/**
 * Telemetry settings: the retention from configuration (`PATCHBAY_TELEMETRY_RETENTION_DAYS`,
 * src/config.ts), the rest fixed — they bound memory and writer concurrency, not policy.
 */
export function telemetrySettings(config: Pick<Config, "telemetry">): TelemetrySettings {
  return {
    retentionDays: config.telemetry.retentionDays,
    sweepEveryMs: 60 * 60 * 1000,
    writers: 4,
    maxQueuedRequests: 32,
    maxQueuedBytes: 64 * 1024 * 1024,
    conversionThreads: CONVERSION_THREADS,
  };
}
