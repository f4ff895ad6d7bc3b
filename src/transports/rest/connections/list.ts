import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { listConnections } from "../../../features/connections/list-connections.ts";
import { ConnectionSchema } from "../../../features/connections/schemas.ts";
import { EnvironmentParams } from "../../../features/environments/schemas.ts";
import { PageQuery } from "../../../schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { jsonResponse, page, problemResponses } from "../../http/openapi.ts";
import { base, tags } from "./shared.ts";

const route = createRoute({
  method: "get",
  path: base,
  operationId: "listMcpConnections",
  tags,
  summary: "List the environment's MCP connections",
  request: { params: EnvironmentParams, query: PageQuery },
  responses: {
    200: jsonResponse(
      page(ConnectionSchema, "McpConnectionPage"),
      "A page of connections, each with its readiness.",
    ),
    ...problemResponses(),
  },
});

export const registerList = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) =>
    c.json(
      await listConnections({
        ctx: c.get("ctx"),
        input: { ...c.req.valid("param"), ...c.req.valid("query") },
      }),
      200,
    ),
  );
