import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { EnvironmentParams } from "../../../features/environments/schemas.ts";
import { getProblem } from "../../../features/telemetry/problems/get-problem.ts";
import { listProblems } from "../../../features/telemetry/problems/list-problems.ts";
import {
  ProblemListQuerySchema,
  ProblemPageSchema,
  ProblemParams,
  ProblemSchema,
  UpdateProblemBody,
} from "../../../features/telemetry/problems/schemas.ts";
import { setProblemStatus } from "../../../features/telemetry/problems/set-problem-status.ts";
import type { AppEnv } from "../../http/env.ts";
import { idempotent } from "../../http/idempotency.ts";
import { etag, ifMatch } from "../../http/if-match.ts";
import {
  idempotencyKeyParam,
  ifMatchParam,
  jsonBody,
  jsonResponse,
  problemResponses,
  revisionedResponse,
} from "../../http/openapi.ts";

const tags = ["Problems"];
const base = "/environments/{environmentId}/problems";
const params = z.object({ ...EnvironmentParams.shape, ...ProblemParams.shape });

const list = createRoute({
  method: "get",
  path: base,
  operationId: "listProblems",
  tags,
  summary: "List detected problems, most recently seen first",
  description:
    "Problems are exceptions (span exception events and error logs) grouped by fingerprint. Needs `telemetry:read`.",
  request: { params: EnvironmentParams, query: ProblemListQuerySchema },
  responses: { 200: jsonResponse(ProblemPageSchema, "A page of problems."), ...problemResponses() },
});

const get = createRoute({
  method: "get",
  path: `${base}/{problemId}`,
  operationId: "getProblem",
  tags,
  summary: "One problem with its stack trace, sample trace ids and remediation state",
  description: "Needs `telemetry:read`. `ETag` carries the revision to send in `If-Match` when changing it.",
  request: { params },
  responses: { 200: revisionedResponse(ProblemSchema, "The problem."), ...problemResponses() },
});

const update = createRoute({
  method: "patch",
  path: `${base}/{problemId}`,
  operationId: "updateProblem",
  tags,
  summary: "Set a problem's status: resolved, ignored or open",
  description:
    "Owners and admins with `problems:manage`. A resolved problem that occurs again becomes `regressed` (and gets a new revision). Setting the current status changes nothing.",
  middleware: [idempotent()] as MiddlewareHandler<AppEnv>[],
  parameters: [idempotencyKeyParam, ifMatchParam],
  request: { params, body: jsonBody(UpdateProblemBody) },
  responses: {
    200: revisionedResponse(ProblemSchema, "The updated problem."),
    ...problemResponses(409, 412, 413, 415, 422, 428),
  },
});

export function registerProblemRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(list, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("query") };
    return c.json(await listProblems({ ctx: c.get("ctx"), input }), 200);
  });
  app.openapi(get, async (c) => {
    const problem = await getProblem({ ctx: c.get("ctx"), input: c.req.valid("param") });
    c.header("etag", etag(problem.revision));
    return c.json(problem, 200);
  });
  app.openapi(update, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("json"), revision: ifMatch(c) };
    const problem = await setProblemStatus({ ctx: c.get("ctx"), input });
    c.header("etag", etag(problem.revision));
    return c.json(problem, 200);
  });
}
