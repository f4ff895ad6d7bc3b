import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { getConnection } from "../../../features/connections/get-connection.ts";
import { ConnectionParams, ConnectionSchema } from "../../../features/connections/schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { problemResponses, revisionedResponse } from "../../http/openapi.ts";
import { base, tags, withEtag } from "./shared.ts";

const route = createRoute({
  method: "get",
  path: `${base}/{connectionId}`,
  operationId: "getMcpConnection",
  tags,
  summary: "Get an MCP connection with its revision and readiness",
  request: { params: ConnectionParams },
  responses: { 200: revisionedResponse(ConnectionSchema, "The connection."), ...problemResponses() },
});

export const registerGet = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) =>
    c.json(withEtag(c, await getConnection({ ctx: c.get("ctx"), input: c.req.valid("param") })), 200),
  );
