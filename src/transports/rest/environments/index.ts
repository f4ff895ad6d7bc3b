import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/env.ts";
import { registerCreateEnvironment } from "./create.ts";
import { registerGetEnvironment } from "./get.ts";
import { registerListEnvironments } from "./list.ts";
import { registerUpdateEnvironment } from "./update.ts";

export function registerEnvironmentRoutes(app: OpenAPIHono<AppEnv>): void {
  registerListEnvironments(app);
  registerCreateEnvironment(app);
  registerGetEnvironment(app);
  registerUpdateEnvironment(app);
}
