import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { createConnection } from "../../../features/connections/create-connection.ts";
import { ConnectionSchema, CreateConnectionBody } from "../../../features/connections/schemas.ts";
import { EnvironmentParams } from "../../../features/environments/schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { idempotent } from "../../http/idempotency.ts";
import { idempotencyKeyParam, jsonBody, problemResponses, revisionedResponse } from "../../http/openapi.ts";
import { base, tags, withEtag } from "./shared.ts";

const route = createRoute({
  method: "post",
  path: base,
  operationId: "createMcpConnection",
  tags,
  summary: "Create an MCP connection (disabled, no credential, revision 1)",
  middleware: [idempotent()] as const,
  parameters: [idempotencyKeyParam],
  request: {
    params: EnvironmentParams,
    body: {
      ...jsonBody(CreateConnectionBody),
      content: {
        "application/json": {
          schema: CreateConnectionBody,
          example: {
            alias: "runbooks",
            displayName: "Runbooks",
            endpointUrl: "https://mcp.example.com/mcp",
            auth: { kind: "bearer" },
          },
        },
      },
    },
  },
  responses: {
    201: revisionedResponse(ConnectionSchema, "The new connection."),
    ...problemResponses(409, 413, 415, 422),
  },
});

export const registerCreate = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("json") };
    const connection = await createConnection({ ctx: c.get("ctx"), input });
    c.header("location", `/api/v1/environments/${connection.environmentId}/mcp-connections/${connection.id}`);
    return c.json(withEtag(c, connection), 201);
  });
