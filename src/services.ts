import type { Deps } from "./deps.ts";
import { resumeRunsAwaitingRepository } from "./features/remediations/resume-awaiting-repository.ts";
import { createRemediationServices } from "./features/remediations/services.ts";
import { telemetryEvidence } from "./features/remediations/telemetry-evidence.ts";
import { telemetrySettings } from "./features/telemetry/settings.ts";
import { createTelemetryRuntime } from "./features/telemetry/telemetry-runtime.ts";

/** What the services are built from: everything in `Deps` but the services. */
export type BaseDeps = Omit<Deps, "telemetry" | "remediation">;

/**
 * The deps with their services, built once: telemetry's store, write queue and conversion
 * threads, and remediation's sandbox and source hosting with the telemetry store as evidence.
 * A test that needs other services spreads the result: `{ ...deps, remediation: its own }`.
 */
export function withServices(base: BaseDeps): Deps {
  const telemetry = createTelemetryRuntime({
    database: base.database,
    logger: base.logger,
    clock: base.clock,
    settings: telemetrySettings(base.config),
  });
  const remediation = createRemediationServices({
    config: base.config,
    logger: base.logger,
    evidence: telemetryEvidence(() => deps),
    resumeRunsAwaitingRepository: (tx, args) => resumeRunsAwaitingRepository(tx, deps, args),
  });
  const deps: Deps = { ...base, telemetry, remediation };
  return deps;
}
