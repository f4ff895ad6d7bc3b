import type { OpenAPIHono } from "@hono/zod-openapi";
import { createRoute } from "@hono/zod-openapi";
import { renameEnvironment } from "../../../features/environments/rename-environment.ts";
import {
  EnvironmentParams,
  EnvironmentSchema,
  UpdateEnvironmentBody,
} from "../../../features/environments/schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { idempotent } from "../../http/idempotency.ts";
import { etag, ifMatch } from "../../http/if-match.ts";
import {
  idempotencyKeyParam,
  ifMatchParam,
  jsonBody,
  problemResponses,
  revisionedResponse,
} from "../../http/openapi.ts";

const route = createRoute({
  method: "patch",
  path: "/environments/{environmentId}",
  operationId: "updateEnvironment",
  tags: ["Environments"],
  summary: "Rename an environment",
  middleware: [idempotent()] as const,
  parameters: [idempotencyKeyParam, ifMatchParam],
  request: { params: EnvironmentParams, body: jsonBody(UpdateEnvironmentBody) },
  responses: {
    200: revisionedResponse(EnvironmentSchema, "The updated environment."),
    ...problemResponses(409, 412, 413, 415, 422, 428),
  },
});

export const registerUpdateEnvironment = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("json"), revision: ifMatch(c) };
    const env = await renameEnvironment({ ctx: c.get("ctx"), input });
    c.header("etag", etag(env.revision));
    return c.json(env, 200);
  });
