import type { LanguageModel } from "ai";
import type { Config } from "./config.ts";
import type { AuthCache } from "./features/api-keys/auth-cache.ts";
import type { RemediationServices } from "./features/remediations/services.ts";
import type { TelemetryRuntime } from "./features/telemetry/telemetry-runtime.ts";
import type { DatabaseHandle, Db } from "./platform/db/client.ts";
import type { Egress } from "./platform/egress/egress-fetch.ts";
import type { Logger } from "./platform/logging/logger.ts";
import type { Payments } from "./platform/payments/payments.ts";
import type { Jobs } from "./platform/queue/queue.ts";
import type { Keyring } from "./platform/vault/keyring.ts";

/**
 * Everything a verb may reach. Built once at start-up (`buildDeps`, or per test file); passed down
 * explicitly — there is no global database or logger.
 */
export type Deps = {
  config: Config;
  db: Db;
  database: DatabaseHandle;
  logger: Logger;
  /** Vault key-encryption keys. */
  keyring: Keyring;
  /** The only way out: every outbound call to a customer server goes through it. */
  egress: Egress;
  clock: () => Date;
  /**
   * Resolved API keys, invalidated over LISTEN/NOTIFY (features/api-keys/auth-changes.ts).
   * Absent: every request reads its key from the database.
   */
  authCache?: AuthCache | undefined;
  /** The durable job queue (pg-boss on the service database). */
  jobs: Jobs;
  /** The task agent's model, from PATCHBAY_MODEL; undefined when none is configured. */
  languageModel: LanguageModel | undefined;
  /** x402: ready to charge (remote facilitator or the local dev chain) or unavailable (503). */
  payments: Payments;
  /** Telemetry's store, write queue and conversion threads (`withServices`, src/services.ts). */
  telemetry: TelemetryRuntime;
  /** Remediation's evidence (the telemetry store), sandbox and source hosting (`withServices`). */
  remediation: RemediationServices;
};
