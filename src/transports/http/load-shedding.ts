import type { MiddlewareHandler } from "hono";
import { AppError } from "../../errors.ts";
import type { AppEnv } from "./env.ts";

/**
 * Seconds a shed client waits: in-flight requests take milliseconds to a few seconds, so a
 * second later there is usually room, and a recovered instance is not left idle for long.
 */
export const SHED_RETRY_AFTER_SECONDS = 1;

/**
 * Bounds the requests this instance works on at once. Past `limit` a request is refused on arrival
 * with 503 `overloaded` (Retry-After; `Connection: close`, see connection-close.ts), before
 * anything authenticates it, reads its body or charges it. Queueing it instead would not raise
 * throughput (one event loop, a bounded database pool): every queued request only adds latency
 * and memory to all the others, until clients time out and retry on top.
 *
 * One counter for every door this middleware is mounted on, so a flood on one shares the bound
 * with the rest. A request counts until its handler has produced the response.
 */
export function loadShedding(limit: number): MiddlewareHandler<AppEnv> {
  let inFlight = 0;
  // Shared, not a closure per request: this runs on every request of the hot path.
  const release = () => {
    inFlight--;
  };
  return (_c, next) => {
    if (inFlight >= limit) {
      throw new AppError("overloaded", "This instance is at capacity; retry shortly.", {
        retryAfterSeconds: SHED_RETRY_AFTER_SECONDS,
      });
    }
    inFlight++;
    return next().finally(release);
  };
}
