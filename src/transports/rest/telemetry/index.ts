import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/env.ts";
import { registerProblemRoutes } from "./problem-routes.ts";
import { registerQueryRoutes } from "./query-routes.ts";

/** The REST reads of telemetry (services, logs, traces) and problems, under /api/v1. */
export function registerTelemetryRoutes(app: OpenAPIHono<AppEnv>): void {
  registerQueryRoutes(app);
  registerProblemRoutes(app);
}
