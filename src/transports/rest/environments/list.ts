import type { OpenAPIHono } from "@hono/zod-openapi";
import { createRoute } from "@hono/zod-openapi";
import { listEnvironments } from "../../../features/environments/list-environments.ts";
import { EnvironmentSchema } from "../../../features/environments/schemas.ts";
import { PageQuery } from "../../../schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { jsonResponse, page, problemResponses } from "../../http/openapi.ts";

const route = createRoute({
  method: "get",
  path: "/environments",
  operationId: "listEnvironments",
  tags: ["Environments"],
  summary: "List the organisation's environments",
  request: { query: PageQuery },
  responses: {
    200: jsonResponse(page(EnvironmentSchema, "EnvironmentPage"), "A page of environments."),
    ...problemResponses(),
  },
});

export const registerListEnvironments = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) =>
    c.json(await listEnvironments({ ctx: c.get("ctx"), input: c.req.valid("query") }), 200),
  );
