import type { OpenAPIHono } from "@hono/zod-openapi";
import { createRoute } from "@hono/zod-openapi";
import { createEnvironment } from "../../../features/environments/create-environment.ts";
import { CreateEnvironmentBody, EnvironmentSchema } from "../../../features/environments/schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { idempotent } from "../../http/idempotency.ts";
import { etag } from "../../http/if-match.ts";
import { idempotencyKeyParam, jsonBody, problemResponses, revisionedResponse } from "../../http/openapi.ts";

const route = createRoute({
  method: "post",
  path: "/environments",
  operationId: "createEnvironment",
  tags: ["Environments"],
  summary: "Create an environment",
  middleware: [idempotent()] as const,
  parameters: [idempotencyKeyParam],
  request: { body: jsonBody(CreateEnvironmentBody) },
  responses: {
    201: revisionedResponse(EnvironmentSchema, "The new environment."),
    ...problemResponses(409, 413, 415, 422),
  },
});

export const registerCreateEnvironment = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const env = await createEnvironment({ ctx: c.get("ctx"), input: c.req.valid("json") });
    c.header("etag", etag(env.revision));
    c.header("location", `/api/v1/environments/${env.id}`);
    return c.json(env, 201);
  });
