import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { EnvironmentParams } from "../../../features/environments/schemas.ts";
import { createPublishableKey } from "../../../features/publishable-keys/create-publishable-key.ts";
import { listPublishableKeys } from "../../../features/publishable-keys/list-publishable-keys.ts";
import { revokePublishableKey } from "../../../features/publishable-keys/revoke-publishable-key.ts";
import {
  CreatedPublishableKeySchema,
  CreatePublishableKeyBody,
  PublishableKeyParams,
  PublishableKeySchema,
} from "../../../features/publishable-keys/schemas.ts";
import { PageQuery } from "../../../schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { jsonBody, jsonResponse, page, problemResponses } from "../../http/openapi.ts";

const tags = ["Publishable keys"];
const base = "/environments/{environmentId}/publishable-keys";

const list = createRoute({
  method: "get",
  path: base,
  operationId: "listPublishableKeys",
  tags,
  summary: "List the environment's publishable keys (never the keys themselves)",
  request: { params: EnvironmentParams, query: PageQuery },
  responses: {
    200: jsonResponse(
      page(PublishableKeySchema, "PublishableKeyPage"),
      "A page of keys, revoked ones included.",
    ),
    ...problemResponses(),
  },
});

// No Idempotency-Key, as for POST /api-keys: a replay would have to store the key.
const create = createRoute({
  method: "post",
  path: base,
  operationId: "createPublishableKey",
  tags,
  summary: "Create a publishable key for telemetry ingest (the key is shown once)",
  description:
    "Owners and admins. The key only lets telemetry into this environment (OTLP/HTTP on /v1/traces, /v1/logs, /v1/metrics), so it may be embedded in applications. At most 20 active keys per environment (409 `limit_exceeded`).",
  request: { params: EnvironmentParams, body: jsonBody(CreatePublishableKeyBody) },
  responses: {
    201: jsonResponse(CreatedPublishableKeySchema, "The key record and the key."),
    ...problemResponses(409, 413, 415),
  },
});

const revoke = createRoute({
  method: "delete",
  path: `${base}/{keyId}`,
  operationId: "revokePublishableKey",
  tags,
  summary: "Revoke a publishable key: telemetry carrying it is refused from the next request on",
  request: { params: PublishableKeyParams },
  responses: { 204: { description: "Revoked (also when it already was)." }, ...problemResponses() },
});

export function registerPublishableKeyRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(list, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("query") };
    return c.json(await listPublishableKeys({ ctx: c.get("ctx"), input }), 200);
  });
  app.openapi(create, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("json") };
    const created = await createPublishableKey({ ctx: c.get("ctx"), input });
    c.header("cache-control", "no-store");
    return c.json(created, 201);
  });
  app.openapi(revoke, async (c) => {
    await revokePublishableKey({ ctx: c.get("ctx"), input: c.req.valid("param") });
    return c.body(null, 204);
  });
}
