import type { Config } from "../../config.ts";

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
  };
}
