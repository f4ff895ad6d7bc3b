import type { Context, MiddlewareHandler, Next } from "hono";
import type { Logger } from "../../platform/logging/logger.ts";
import type { AppEnv } from "./env.ts";

/**
 * One line per request: method, path, status, duration, request id. Deliberately no headers,
 * query values or bodies — those are where keys and credentials travel.
 */
export const accessLog = (): MiddlewareHandler<AppEnv> => (c, next) => {
  const logger = c.get("deps").logger;
  // Not async itself: with `info` off, the request passes through without a promise of its own.
  return logger.isLevelEnabled("info") ? logged(c, next, logger) : next();
};

async function logged(c: Context<AppEnv>, next: Next, logger: Logger): Promise<void> {
  const started = performance.now();
  await next();
  logger.info(
    {
      requestId: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    },
    "request",
  );
}
