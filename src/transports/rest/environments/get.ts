import type { OpenAPIHono } from "@hono/zod-openapi";
import { createRoute } from "@hono/zod-openapi";
import { getEnvironment } from "../../../features/environments/get-environment.ts";
import { EnvironmentParams, EnvironmentSchema } from "../../../features/environments/schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { jsonWithEtag } from "../../http/if-match.ts";
import { problemResponses, revisionedResponse } from "../../http/openapi.ts";

const route = createRoute({
  method: "get",
  path: "/environments/{environmentId}",
  operationId: "getEnvironment",
  tags: ["Environments"],
  summary: "Get an environment",
  request: { params: EnvironmentParams },
  responses: { 200: revisionedResponse(EnvironmentSchema, "The environment."), ...problemResponses() },
});

export const registerGetEnvironment = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const env = await getEnvironment({ ctx: c.get("ctx"), input: c.req.valid("param") });
    return jsonWithEtag(env, 200, env.revision);
  });
