import { z } from "zod";
import { ConfigError } from "./config-error.ts";
import { type EgressPolicy, egressPolicyFromEnv } from "./features/egress/address-policy.ts";
import { type RemediationSettings, readRemediationSettings } from "./features/remediations/settings.ts";
import { type ModelSettings, readModelSettings } from "./features/tasks/model-config.ts";
import { type PaymentSettings, readPaymentSettings } from "./features/x402/payment-settings.ts";

export { ConfigError, EX_CONFIG } from "./config-error.ts";

const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

const schema = z.object({
  NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
  PORT: z.coerce.number().int().min(0).max(65_535).default(8787),
  HOST: z.string().min(1).default("127.0.0.1"),
  PATCHBAY_BASE_URL: z
    .url({ protocol: /^https?$/ })
    .transform((u) => u.replace(/\/+$/, ""))
    .optional(),
  PATCHBAY_DATA_DIR: z.string().min(1).default("./.patchbay"),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL (leave unset for the embedded database)")
    .optional(),
  PATCHBAY_KEK: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(logLevels).optional(),
  PATCHBAY_TELEMETRY_RETENTION_DAYS: z.coerce
    .number("must be a whole number of days from 1 to 3650")
    .int("must be a whole number of days from 1 to 3650")
    .min(1, "must be a whole number of days from 1 to 3650")
    .max(3650, "must be a whole number of days from 1 to 3650")
    .default(7),
});

export type Config = {
  nodeEnv: "development" | "test" | "production";
  port: number;
  host: string;
  /** Public base URL without a trailing slash; derived from host and port when unset. */
  baseUrl: string;
  dataDir: string;
  database: { kind: "pglite"; dataDir: string } | { kind: "postgres"; url: string };
  /** Raw KEK keyring string, or undefined in development (then generated into the data dir). */
  kek: string | undefined;
  logLevel: (typeof logLevels)[number];
  /** Outbound policy: strict in production; dev/test may allow loopback CIDRs, ports and a CA. */
  egress: EgressPolicy;
  /** The task agent's model provider, or undefined (tasks then answer `model_not_configured`). */
  model: ModelSettings | undefined;
  /** x402 payments: a remote facilitator, the local dev chain, or none (paid routes answer 503). */
  x402: PaymentSettings;
  /** Telemetry older than this many days is deleted by the retention sweep. */
  telemetry: { retentionDays: number };
  /** Remediation: the sandbox, where local-git repositories may live, the GitHub App. */
  remediation: RemediationSettings;
};

/** Reads the environment once; throws ConfigError naming the first bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(emptyToUndefined(env));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue?.path[0] ?? "environment");
    throw new ConfigError(variable, issue?.message ?? "invalid value");
  }
  const e = parsed.data;
  if (e.NODE_ENV === "production" && !e.PATCHBAY_KEK) {
    throw new ConfigError("PATCHBAY_KEK", "is required when NODE_ENV=production");
  }
  if (e.NODE_ENV === "production" && !e.PATCHBAY_BASE_URL) {
    throw new ConfigError("PATCHBAY_BASE_URL", "is required when NODE_ENV=production");
  }
  // Throws ConfigError naming the PATCHBAY_EGRESS_* variable at fault.
  const egress = egressPolicyFromEnv(env, e.NODE_ENV);
  const displayHost = e.HOST === "0.0.0.0" || e.HOST === "::" ? "localhost" : e.HOST;
  return {
    nodeEnv: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    baseUrl: e.PATCHBAY_BASE_URL ?? `http://${displayHost}:${e.PORT}`,
    dataDir: e.PATCHBAY_DATA_DIR,
    database: e.DATABASE_URL
      ? { kind: "postgres", url: e.DATABASE_URL }
      : { kind: "pglite", dataDir: e.PATCHBAY_DATA_DIR },
    kek: e.PATCHBAY_KEK,
    logLevel: e.LOG_LEVEL ?? (e.NODE_ENV === "test" ? "silent" : "info"),
    egress,
    model: readModelSettings(env),
    x402: readPaymentSettings(env, e.NODE_ENV),
    telemetry: { retentionDays: e.PATCHBAY_TELEMETRY_RETENTION_DAYS },
    remediation: readRemediationSettings(env, e.NODE_ENV),
  };
}

/** `PORT=` in a shell means "unset", not "the empty string". */
function emptyToUndefined(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) out[k] = v === "" ? undefined : v;
  return out;
}
