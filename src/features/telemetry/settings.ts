import { availableParallelism } from "node:os";
import type { Config } from "../../config.ts";

/**
 * One conversion thread per core beyond the serving thread's, at least one and at most two.
 * Alone, a thread converts 110,000–150,000 spans/s (6–9 µs each; docs/performance.md), more
 * than one serving thread and its database store; threads beyond the idle cores only compete.
 */
const CONVERSION_THREADS = Math.min(2, Math.max(1, availableParallelism() - 1));

export type TelemetrySettings = {
  /** Rows older than this are deleted by the retention sweep. */
  retentionDays: number;
  sweepEveryMs: number;
  /** Concurrent storage writes (transactions). */
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
