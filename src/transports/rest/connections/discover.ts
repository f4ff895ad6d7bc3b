import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { discoverConnectionTools } from "../../../features/connections/discover-connection-tools.ts";
import { ConnectionParams, DiscoverySchema } from "../../../features/connections/schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { ifMatch } from "../../http/if-match.ts";
import { jsonResponse, problemResponses } from "../../http/openapi.ts";
import { base, mutation, tags } from "./shared.ts";

const route = createRoute({
  method: "post",
  path: `${base}/{connectionId}/discoveries`,
  operationId: "discoverMcpConnectionTools",
  tags,
  summary: "Discover the server's tools for review (does not change the revision)",
  ...mutation,
  request: { params: ConnectionParams },
  responses: {
    201: jsonResponse(DiscoverySchema, "The server-derived tool list."),
    ...problemResponses(409, 412, 422, 428, 502, 504),
  },
});

export const registerDiscover = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const input = { ...c.req.valid("param"), revision: ifMatch(c) };
    return c.json(await discoverConnectionTools({ ctx: c.get("ctx"), input }), 201);
  });
