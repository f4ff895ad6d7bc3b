import { Hono } from "hono";
import { cors } from "hono/cors";
import { statusResponse } from "../../features/telemetry/otlp-response.ts";
import { signals } from "../../features/telemetry/otlp-schema.ts";
import type { IngestPipeline } from "../../features/telemetry/telemetry-runtime.ts";
import type { AppEnv } from "../http/env.ts";
import { exportHandler, formatOf } from "./export-handler.ts";

/**
 * OTLP/HTTP receiver, mounted at /v1 outside the /api/v1 authentication: these routes take a
 * publishable key, not an API key. CORS is open (no credentials) because publishable keys are
 * made for browsers and other shipped code.
 */
export function createOtlpRouter(runtime: IngestPipeline): Hono<AppEnv> {
  const router = new Hono<AppEnv>();
  router.use(
    "*",
    cors({
      origin: "*",
      allowMethods: ["POST"],
      allowHeaders: ["content-type", "content-encoding", "authorization", "x-patchbay-key"],
      exposeHeaders: ["retry-after", "x-request-id"],
      maxAge: 600,
    }),
  );
  for (const signal of signals) {
    router.post(`/${signal}`, exportHandler(signal, runtime));
    router.all(`/${signal}`, (c) =>
      statusResponse(formatOf(c.req.header("content-type")) ?? "json", 405, "Use POST.", { allow: "POST" }),
    );
  }
  return router;
}
