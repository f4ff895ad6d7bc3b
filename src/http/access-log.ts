import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.ts";

/**
 * One line per request: method, path, status, duration, request id. Deliberately no headers,
 * query values or bodies — those are where keys and credentials travel.
 */
export const accessLog = (): MiddlewareHandler<AppEnv> => async (c, next) => {
  const logger = c.get("deps").logger;
  if (!logger.isLevelEnabled("info")) return next();
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
};
