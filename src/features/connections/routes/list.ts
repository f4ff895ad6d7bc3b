import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/env.ts";
import { jsonResponse, page, problemResponses } from "../../../http/openapi.ts";
import { PageQuery } from "../../../schemas.ts";
import { EnvironmentParams } from "../../environments/schemas.ts";
import { listConnections } from "../list-connections.ts";
import { ConnectionSchema } from "../schemas.ts";
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
