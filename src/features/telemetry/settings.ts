import { ConfigError } from "../../config-error.ts";

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
 * Telemetry settings from the process environment. Lives here until it moves into src/config.ts;
 * only `PATCHBAY_TELEMETRY_RETENTION_DAYS` (default 7, 1–3650) is configurable today.
 */
export function readTelemetrySettings(env: NodeJS.ProcessEnv = process.env): TelemetrySettings {
  const raw = env.PATCHBAY_TELEMETRY_RETENTION_DAYS?.trim();
  let retentionDays = 7;
  if (raw) {
    retentionDays = Number(raw);
    if (!Number.isInteger(retentionDays) || retentionDays < 1 || retentionDays > 3650) {
      throw new ConfigError(
        "PATCHBAY_TELEMETRY_RETENTION_DAYS",
        "must be a whole number of days from 1 to 3650",
      );
    }
  }
  return {
    retentionDays,
    sweepEveryMs: 60 * 60 * 1000,
    writers: 4,
    maxQueuedRequests: 32,
    maxQueuedBytes: 64 * 1024 * 1024,
  };
}
