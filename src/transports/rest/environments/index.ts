import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { createEnvironment } from "../../../features/environments/create-environment.ts";
import { getEnvironment } from "../../../features/environments/get-environment.ts";
import { listEnvironments } from "../../../features/environments/list-environments.ts";
import { renameEnvironment } from "../../../features/environments/rename-environment.ts";
import {
  CreateEnvironmentBody,
  EnvironmentParams,
  EnvironmentSchema,
  UpdateEnvironmentBody,
} from "../../../features/environments/schemas.ts";
import { PageQuery } from "../../../schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { ifMatch, jsonWithEtag } from "../../http/if-match.ts";
import { jsonBody, jsonResponse, page, problemResponses, revisionedResponse } from "../../http/openapi.ts";
import { idempotentChange, revisionedChange, withEtag } from "../operation.ts";

const tags = ["Environments"];

export function registerEnvironmentRoutes(app: OpenAPIHono<AppEnv>): void {
  const list = createRoute({
    method: "get",
    path: "/environments",
    operationId: "listEnvironments",
    tags,
    summary: "List the organisation's environments",
    request: { query: PageQuery },
    responses: {
      200: jsonResponse(page(EnvironmentSchema, "EnvironmentPage"), "A page of environments."),
      ...problemResponses(),
    },
  });
  app.openapi(list, async (c) =>
    c.json(await listEnvironments({ ctx: c.get("ctx"), input: c.req.valid("query") }), 200),
  );

  const create = createRoute({
    method: "post",
    path: "/environments",
    operationId: "createEnvironment",
    tags,
    summary: "Create an environment",
    ...idempotentChange,
    request: { body: jsonBody(CreateEnvironmentBody) },
    responses: {
      201: revisionedResponse(EnvironmentSchema, "The new environment."),
      ...problemResponses(409, 413, 415, 422),
    },
  });
  app.openapi(create, async (c) => {
    const env = withEtag(c, await createEnvironment({ ctx: c.get("ctx"), input: c.req.valid("json") }));
    c.header("location", `/api/v1/environments/${env.id}`);
    return c.json(env, 201);
  });

  const get = createRoute({
    method: "get",
    path: "/environments/{environmentId}",
    operationId: "getEnvironment",
    tags,
    summary: "Get an environment",
    request: { params: EnvironmentParams },
    responses: { 200: revisionedResponse(EnvironmentSchema, "The environment."), ...problemResponses() },
  });
  app.openapi(get, async (c) => {
    const env = await getEnvironment({ ctx: c.get("ctx"), input: c.req.valid("param") });
    return jsonWithEtag(env, 200, env.revision);
  });

  const update = createRoute({
    method: "patch",
    path: "/environments/{environmentId}",
    operationId: "updateEnvironment",
    tags,
    summary: "Rename an environment",
    ...revisionedChange,
    request: { params: EnvironmentParams, body: jsonBody(UpdateEnvironmentBody) },
    responses: {
      200: revisionedResponse(EnvironmentSchema, "The updated environment."),
      ...problemResponses(409, 412, 413, 415, 422, 428),
    },
  });
  app.openapi(update, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("json"), revision: ifMatch(c) };
    return c.json(withEtag(c, await renameEnvironment({ ctx: c.get("ctx"), input })), 200);
  });
}
