import type { Deps } from "../../deps.ts";
import { type ConversionPool, createConversionPool } from "./conversion/conversion-pool.ts";
import { createPostgresTelemetryStore } from "./postgres-telemetry-store.ts";
import { type TelemetrySettings, telemetrySettings } from "./settings.ts";
import type { TelemetryStore } from "./telemetry-store.ts";
import { createWriteQueue, type WriteQueue } from "./write-queue.ts";

/** The store, the bounded write queue and the conversion threads that OTLP ingest runs through. */
export type TelemetryRuntime = { store: TelemetryStore; queue: WriteQueue; conversion: ConversionPool };

const runtimes = new WeakMap<Deps, TelemetryRuntime>();

/**
 * One runtime per `deps` (so per process in production, per test file in tests): every app built
 * on the same deps shares one queue, whose bounds are then real, one retention timer and one set
 * of conversion threads. `closeTelemetryRuntime` stops them.
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
      conversion: createConversionPool({
        threads: settings.conversionThreads,
        // Every conversion belongs to an admitted request: this bound is only a backstop.
        maxPending: settings.maxQueuedRequests,
        logger: deps.logger,
      }),
    };
    runtimes.set(deps, runtime);
  }
  return runtime;
}

/** Stops the retention timer and terminates the conversion threads of `deps`'s runtime, if any. */
export async function closeTelemetryRuntime(deps: Deps): Promise<void> {
  const runtime = runtimes.get(deps);
  if (!runtime) return;
  runtimes.delete(deps);
  runtime.store.close();
  await runtime.conversion.close();
}
