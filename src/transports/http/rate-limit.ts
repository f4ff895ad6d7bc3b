import type { Context, MiddlewareHandler } from "hono";
import type { Actor } from "../../actor.ts";
import { AppError } from "../../errors.ts";
import type { AppEnv } from "./env.ts";
import { GcraQuota } from "./gcra.ts";
import { problemResponse } from "./problem.ts";

const WINDOW_SECONDS = 60;

type Policy = { name: "key" | "org"; quota: GcraQuota; partition: (actor: Actor) => string };

/** What one request spent: empty `violated` when it may go ahead. */
export type RateLimitVerdict = {
  /** The `RateLimit` field value (draft-ietf-httpapi-ratelimit-headers), one item per policy. */
  rateLimit: string;
  /** Seconds until the exhausted quotas have room again; 0 when allowed. */
  retryAfterSeconds: number;
  violated: readonly ("key" | "org")[];
};

export type RateLimits = {
  /** Spends one request of each of the caller's quotas, or none when any is exhausted. */
  admit(actor: Actor): RateLimitVerdict;
  /** The `RateLimit-Policy` field value: the same on every answer. */
  readonly policy: string;
};

const allowed: readonly ("key" | "org")[] = [];

/**
 * Per-instance request-rate limits: `keyRequestsPerMinute` per API key or OAuth grant (a token
 * refreshed from the grant keeps its count), `orgRequestsPerMinute` per organisation across all
 * its callers; 0 turns one off, and with both off there are none (undefined). In memory: with N
 * instances behind a balancer a caller gets up to N times the limit (docs/deploy.md). `now` is a
 * monotonic clock in milliseconds, so wall-clock steps neither refill nor freeze a quota.
 */
export function createRateLimits(
  settings: { keyRequestsPerMinute: number; orgRequestsPerMinute: number },
  now: () => number = () => performance.now(),
): RateLimits | undefined {
  const policies: Policy[] = [];
  const windowMs = WINDOW_SECONDS * 1000;
  if (settings.keyRequestsPerMinute > 0) {
    const quota = new GcraQuota(settings.keyRequestsPerMinute, windowMs);
    policies.push({ name: "key", quota, partition: (actor) => actor.id });
  }
  if (settings.orgRequestsPerMinute > 0) {
    const quota = new GcraQuota(settings.orgRequestsPerMinute, windowMs);
    policies.push({ name: "org", quota, partition: (actor) => actor.organizationId });
  }
  if (policies.length === 0) return undefined;
  const policy = policies.map((p) => `"${p.name}";q=${p.quota.limit};w=${WINDOW_SECONDS}`).join(", ");
  const item = (p: Policy, ahead: number) =>
    `"${p.name}";r=${p.quota.remaining(ahead)};t=${Math.ceil(p.quota.msUntilNext(ahead) / 1000)}`;

  return {
    policy,
    admit(actor) {
      const at = now();
      let waitMs = 0;
      let violated = allowed;
      const checked = policies.map((p) => {
        const partition = p.partition(actor);
        const ahead = p.quota.ahead(partition, at);
        if (!p.quota.fits(ahead)) {
          waitMs = Math.max(waitMs, p.quota.msUntilNext(ahead));
          violated = [...violated, p.name];
        }
        return { p, partition, ahead };
      });
      // All or nothing: a request refused by the organisation's quota costs its key nothing.
      const spend = violated.length === 0;
      let rateLimit = "";
      for (const { p, partition, ahead } of checked) {
        const after = spend ? p.quota.take(partition, at, ahead) : ahead;
        rateLimit = rateLimit === "" ? item(p, after) : `${rateLimit}, ${item(p, after)}`;
      }
      return { rateLimit, retryAfterSeconds: spend ? 0 : Math.max(1, Math.ceil(waitMs / 1000)), violated };
    },
  };
}

/** Adds the two fields to an answer the request was allowed to produce. */
export function stampRateLimit(headers: Headers, limits: RateLimits, verdict: RateLimitVerdict): void {
  headers.set("ratelimit-policy", limits.policy);
  headers.set("ratelimit", verdict.rateLimit);
}

/** 429 `rate_limited` with `Retry-After` and the fields, naming the exhausted quotas. */
export function rateLimitedResponse(
  c: Context<AppEnv>,
  limits: RateLimits,
  verdict: RateLimitVerdict,
): Response {
  const whose = verdict.violated.includes("org") ? "this organisation" : "this API key or OAuth grant";
  const seconds = verdict.retryAfterSeconds;
  const error = new AppError("rate_limited", `Too many requests for ${whose}; retry in ${seconds} s.`, {
    retryAfterSeconds: seconds,
    violatedPolicies: verdict.violated,
  });
  return problemResponse(c, error, {
    "retry-after": String(seconds),
    "ratelimit-policy": limits.policy,
    ratelimit: verdict.rateLimit,
  });
}

/**
 * `/api/v1`, right after authentication: the caller's request counts against its key's and its
 * organisation's quotas; every answer carries `RateLimit-Policy` and `RateLimit`.
 */
export const rateLimit =
  (limits: RateLimits | undefined): MiddlewareHandler<AppEnv> =>
  (c, next) => {
    if (!limits) return next();
    const verdict = limits.admit(c.get("ctx").actor);
    if (verdict.violated.length > 0) return Promise.resolve(rateLimitedResponse(c, limits, verdict));
    return next().then(() => stampRateLimit(c.res.headers, limits, verdict));
  };
