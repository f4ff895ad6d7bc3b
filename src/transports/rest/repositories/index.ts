import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { EnvironmentParams } from "../../../features/environments/schemas.ts";
import { createRepository } from "../../../features/repositories/create-repository.ts";
import { deleteRepository } from "../../../features/repositories/delete-repository.ts";
import { getRepository, listRepositories } from "../../../features/repositories/read-repositories.ts";
import {
  CreateRepositoryBody,
  RepositoryParams,
  RepositorySchema,
} from "../../../features/repositories/schemas.ts";
import { PageQuery } from "../../../schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { jsonBody, jsonResponse, page, problemResponses } from "../../http/openapi.ts";
import { idempotentChange } from "../operation.ts";

const tags = ["Repositories"];
const base = "/environments/{environmentId}/repositories";

const create = createRoute({
  method: "post",
  path: base,
  operationId: "createRepository",
  tags,
  summary: "Register a repository for remediation (people only; agents never register paths)",
  description:
    "`local-git`: an absolute path to the top level of a git work tree on the server's machine, whose `defaultBranch` exists. `github`: a repository an installation of patchbay's GitHub App (linked to this organisation) can read. `services` maps problems of those services to this repository. Runs of the environment waiting for repository access resume.",
  ...idempotentChange,
  request: {
    params: EnvironmentParams,
    body: {
      ...jsonBody(CreateRepositoryBody),
      content: {
        "application/json": {
          schema: CreateRepositoryBody,
          example: {
            provider: "local-git",
            path: "/srv/git/checkout",
            defaultBranch: "main",
            testCommand: "npm test",
            services: ["checkout"],
          },
        },
      },
    },
  },
  responses: {
    201: jsonResponse(RepositorySchema, "The registration."),
    ...problemResponses(409, 413, 415, 422, 503),
  },
});

const list = createRoute({
  method: "get",
  path: base,
  operationId: "listRepositories",
  tags,
  summary: "List the environment's registered repositories",
  request: { params: EnvironmentParams, query: PageQuery },
  responses: {
    200: jsonResponse(page(RepositorySchema, "RepositoryPage"), "A page of repositories."),
    ...problemResponses(),
  },
});

const get = createRoute({
  method: "get",
  path: `${base}/{repositoryId}`,
  operationId: "getRepository",
  tags,
  summary: "Get a registered repository",
  request: { params: RepositoryParams },
  responses: { 200: jsonResponse(RepositorySchema, "The repository."), ...problemResponses() },
});

const remove = createRoute({
  method: "delete",
  path: `${base}/{repositoryId}`,
  operationId: "deleteRepository",
  tags,
  summary: "Remove a registration (patchbay's branches stay in the repository)",
  ...idempotentChange,
  request: { params: RepositoryParams },
  responses: { 204: { description: "Removed." }, ...problemResponses(409) },
});

export function registerRepositoryRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(create, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("json") };
    const repo = await createRepository({ ctx: c.get("ctx"), input });
    c.header("location", `/api/v1/environments/${repo.environmentId}/repositories/${repo.id}`);
    return c.json(repo, 201);
  });
  app.openapi(list, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("query") };
    return c.json(await listRepositories({ ctx: c.get("ctx"), input }), 200);
  });
  app.openapi(get, async (c) =>
    c.json(await getRepository({ ctx: c.get("ctx"), input: c.req.valid("param") }), 200),
  );
  app.openapi(remove, async (c) => {
    await deleteRepository({ ctx: c.get("ctx"), input: c.req.valid("param") });
    return c.body(null, 204);
  });
}
