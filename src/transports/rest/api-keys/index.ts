import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { createApiKey } from "../../../features/api-keys/create-api-key.ts";
import { listApiKeys } from "../../../features/api-keys/list-api-keys.ts";
import { revokeApiKey } from "../../../features/api-keys/revoke-api-key.ts";
import {
  ApiKeyParams,
  ApiKeySchema,
  CreateApiKeyBody,
  CreatedApiKeySchema,
} from "../../../features/api-keys/schemas.ts";
import { PageQuery } from "../../../schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { jsonBody, jsonResponse, page, problemResponses } from "../../http/openapi.ts";

const tags = ["API keys"];

const list = createRoute({
  method: "get",
  path: "/api-keys",
  operationId: "listApiKeys",
  tags,
  summary: "List the organisation's API keys",
  request: { query: PageQuery },
  responses: {
    200: jsonResponse(page(ApiKeySchema, "ApiKeyPage"), "A page of keys (never secrets)."),
    ...problemResponses(),
  },
});

// No Idempotency-Key here on purpose: replaying the stored response would mean storing the
// secret, which must exist only in the caller's hands.
const create = createRoute({
  method: "post",
  path: "/api-keys",
  operationId: "createApiKey",
  tags,
  summary: "Create an API key (the secret is shown once)",
  description:
    "Owners and admins create keys for themselves with any permissions, including `mcp_connections:read` and `mcp_connections:manage`, which the UI's key dialog does not offer.",
  request: { body: jsonBody(CreateApiKeyBody) },
  responses: {
    201: jsonResponse(CreatedApiKeySchema, "The key and its secret."),
    ...problemResponses(413, 415),
  },
});

const revoke = createRoute({
  method: "delete",
  path: "/api-keys/{apiKeyId}",
  operationId: "revokeApiKey",
  tags,
  summary: "Revoke an API key",
  request: { params: ApiKeyParams },
  responses: { 204: { description: "Revoked (also when it already was)." }, ...problemResponses() },
});

export function registerApiKeyRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(list, async (c) =>
    c.json(await listApiKeys({ ctx: c.get("ctx"), input: c.req.valid("query") }), 200),
  );
  app.openapi(create, async (c) => {
    const created = await createApiKey({ ctx: c.get("ctx"), input: c.req.valid("json") });
    c.header("cache-control", "no-store");
    return c.json(created, 201);
  });
  app.openapi(revoke, async (c) => {
    await revokeApiKey({ ctx: c.get("ctx"), input: c.req.valid("param") });
    return c.body(null, 204);
  });
}
