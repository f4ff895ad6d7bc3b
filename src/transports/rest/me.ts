import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { getMe } from "../../features/me/get-me.ts";
import { MeSchema } from "../../features/me/schemas.ts";
import type { AppEnv } from "../http/env.ts";
import { jsonResponse, problemResponses } from "../http/openapi.ts";

const route = createRoute({
  method: "get",
  path: "/me",
  operationId: "getMe",
  tags: ["Identity"],
  summary: "The caller, its organisation and permissions",
  responses: { 200: jsonResponse(MeSchema, "The caller."), ...problemResponses() },
});

export const registerMeRoute = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await getMe({ ctx: c.get("ctx") }), 200));
