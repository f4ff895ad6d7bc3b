import ipaddr from "ipaddr.js";
import { z } from "zod";
import { ConfigError } from "./config-error.ts";
import { type RemediationSettings, readRemediationSettings } from "./features/remediations/settings.ts";
import { type ModelSettings, readModelSettings } from "./features/tasks/model-config.ts";
import { type EgressPolicy, egressPolicyFromEnv } from "./platform/egress/address-policy.ts";
import { type PaymentSettings, readPaymentSettings } from "./platform/payments/payment-settings.ts";

export { ConfigError, EX_CONFIG } from "./config-error.ts";

const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** A whole number in [min, max], with one message naming the range whatever is wrong. */
function wholeNumber(min: number, max: number) {
  const message = `must be a whole number from ${min} to ${max}`;
  return z.coerce.number(message).int(message).min(min, message).max(max, message);
}

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
  PATCHBAY_MAX_CONCURRENT_REQUESTS: wholeNumber(1, 100_000).default(256),
  PATCHBAY_RATE_LIMIT_KEY_PER_MINUTE: wholeNumber(0, 1_000_000_000).default(3000),
  PATCHBAY_RATE_LIMIT_ORG_PER_MINUTE: wholeNumber(0, 1_000_000_000).default(6000),
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
  /**
   * Admission on /api/v1, /mcp and /x402: requests worked on at once (past it: 503 `overloaded`),
   * and requests per minute per API key or OAuth grant and per organisation (0: no limit). Per
   * instance (src/transports/http/load-shedding.ts, src/transports/http/rate-limit.ts).
   */
  traffic: { maxConcurrentRequests: number; keyRequestsPerMinute: number; orgRequestsPerMinute: number };
  /** Remediation: the sandbox, where local-git repositories may live, the GitHub App. */
  remediation: RemediationSettings;
  /**
   * CIDRs of the proxies whose X-Forwarded-For is believed (web/client-address.ts). Empty: the
   * socket peer is the client.
   */
  trustedProxies: string[];
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
    traffic: {
      maxConcurrentRequests: e.PATCHBAY_MAX_CONCURRENT_REQUESTS,
      keyRequestsPerMinute: e.PATCHBAY_RATE_LIMIT_KEY_PER_MINUTE,
      orgRequestsPerMinute: e.PATCHBAY_RATE_LIMIT_ORG_PER_MINUTE,
    },
    remediation: readRemediationSettings(env, e.NODE_ENV),
    trustedProxies: readTrustedProxies(env.PATCHBAY_TRUSTED_PROXIES),
  };
}

/** `PATCHBAY_TRUSTED_PROXIES`: comma-separated CIDRs, e.g. `10.0.0.0/8,127.0.0.1/32`. */
function readTrustedProxies(raw: string | undefined): string[] {
  const cidrs = (raw ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
  for (const cidr of cidrs) {
    // Dotted-decimal IPv4 or IPv6 without a zone only: `127.1/8` or `0x7f.0.0.1/8` are valid to
    // inet_aton but easy to misread in a setting that decides whom to believe.
    const valid =
      ipaddr.IPv4.isValidCIDRFourPartDecimal(cidr) || (ipaddr.IPv6.isValidCIDR(cidr) && !cidr.includes("%"));
    if (!valid)
      throw new ConfigError("PATCHBAY_TRUSTED_PROXIES", `"${cidr}" is not a CIDR (e.g. 10.0.0.0/8)`);
  }
  return cidrs;
}

/** `PORT=` in a shell means "unset", not "the empty string". */
function emptyToUndefined(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) out[k] = v === "" ? undefined : v;
  return out;
}
