import type { Deps } from "../../deps.ts";
import { createPostgresTelemetryStore } from "./postgres-telemetry-store.ts";
import { type TelemetrySettings, telemetrySettings } from "./settings.ts";
import type { TelemetryStore } from "./telemetry-store.ts";
import { createWriteQueue, type WriteQueue } from "./write-queue.ts";

/** The store and the bounded write queue that OTLP ingest runs through. */
export type TelemetryRuntime = { store: TelemetryStore; queue: WriteQueue };

const runtimes = new WeakMap<Deps, TelemetryRuntime>();

/**
 * One runtime per `deps` (so per process in production, per test file in tests): every app built
 * on the same deps shares one queue, whose bounds are then real, and one retention timer.
 */
export function telemetryRuntime(
  deps: Deps,
  settings: TelemetrySettings = telemetrySettings(deps.config),
): TelemetryRuntime {
  let runtime = runtimes.get(deps);
  if (!runtime) {
    runtime = {
      store: createPostgresTelemetryStore({
        database: deps.database,
        logger: deps.logger,
        clock: deps.clock,
        retention: { days: settings.retentionDays, sweepEveryMs: settings.sweepEveryMs },
      }),
      queue: createWriteQueue({
        maxRequests: settings.maxQueuedRequests,
        maxBytes: settings.maxQueuedBytes,
        writers: settings.writers,
      }),
    };
    runtimes.set(deps, runtime);
  }
  return runtime;
}
