import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { EnvironmentParams } from "../../../features/environments/schemas.ts";
import { getProblem } from "../../../features/telemetry/problems/get-problem.ts";
import { listProblems } from "../../../features/telemetry/problems/list-problems.ts";
import {
  ProblemListQuerySchema,
  ProblemPageSchema,
  ProblemParams,
  TelemetryProblemSchema,
  UpdateProblemBody,
} from "../../../features/telemetry/problems/schemas.ts";
import { setProblemStatus } from "../../../features/telemetry/problems/set-problem-status.ts";
import { getServiceHealth } from "../../../features/telemetry/queries/get-service-health.ts";
import { getTrace } from "../../../features/telemetry/queries/get-trace.ts";
import {
  LogPageSchema,
  LogSearchQuerySchema,
  ServiceHealthPageSchema,
  ServiceHealthQuerySchema,
  TraceParamsSchema,
  TraceSchema,
} from "../../../features/telemetry/queries/schemas.ts";
import { searchLogs } from "../../../features/telemetry/queries/search-logs.ts";
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

const base = "/environments/{environmentId}";
const readNote = "Needs `telemetry:read`; any member of the organisation may read.";

const services = createRoute({
  method: "get",
  path: `${base}/services`,
  operationId: "listServiceHealth",
  tags: ["Telemetry"],
  summary: "Health of each service: request rate, error rate, p50/p95/p99 latency over a window, last seen",
  description: `Figures come from entry spans (server and consumer spans, and trace roots) in the window ending now. Services are listed by name, a page at a time. ${readNote}`,
  request: { params: EnvironmentParams, query: ServiceHealthQuerySchema },
  responses: { 200: jsonResponse(ServiceHealthPageSchema, "A page of services."), ...problemResponses() },
});

const logs = createRoute({
  method: "get",
  path: `${base}/logs`,
  operationId: "searchLogs",
  tags: ["Telemetry"],
  summary: "Search log records by time range, service, minimum severity, text and trace id",
  description: `Newest first, a page at a time. The range defaults to the last hour. ${readNote}`,
  request: { params: EnvironmentParams, query: LogSearchQuerySchema },
  responses: { 200: jsonResponse(LogPageSchema, "A page of log records."), ...problemResponses() },
});

const trace = createRoute({
  method: "get",
  path: `${base}/traces/{traceId}`,
  operationId: "getTrace",
  tags: ["Telemetry"],
  summary: "One trace as its span tree",
  description: `404 \`not_found\` when no span of the trace is stored (never sent, or past retention). ${readNote}`,
  request: { params: z.object({ ...EnvironmentParams.shape, ...TraceParamsSchema.shape }) },
  responses: { 200: jsonResponse(TraceSchema, "The trace."), ...problemResponses() },
});

const problemsBase = `${base}/problems`;
const params = z.object({ ...EnvironmentParams.shape, ...ProblemParams.shape });

const list = createRoute({
  method: "get",
  path: problemsBase,
  operationId: "listProblems",
  tags: ["Problems"],
  summary: "List detected problems, most recently seen first",
  description:
    "Problems are exceptions (span exception events and error logs) grouped by fingerprint. Needs `telemetry:read`.",
  request: { params: EnvironmentParams, query: ProblemListQuerySchema },
  responses: { 200: jsonResponse(ProblemPageSchema, "A page of problems."), ...problemResponses() },
});

const get = createRoute({
  method: "get",
  path: `${problemsBase}/{problemId}`,
  operationId: "getProblem",
  tags: ["Problems"],
  summary: "One problem with its stack trace, sample trace ids and remediation state",
  description: "Needs `telemetry:read`. `ETag` carries the revision to send in `If-Match` when changing it.",
  request: { params },
  responses: { 200: revisionedResponse(TelemetryProblemSchema, "The problem."), ...problemResponses() },
});

const update = createRoute({
  method: "patch",
  path: `${problemsBase}/{problemId}`,
  operationId: "updateProblem",
  tags: ["Problems"],
  summary: "Set a problem's status: resolved, ignored or open",
  description:
    "Owners and admins with `problems:manage`. A resolved problem that occurs again becomes `regressed` (and gets a new revision). Setting the current status changes nothing.",
  middleware: [idempotent()] as MiddlewareHandler<AppEnv>[],
  parameters: [idempotencyKeyParam, ifMatchParam],
  request: { params, body: jsonBody(UpdateProblemBody) },
  responses: {
    200: revisionedResponse(TelemetryProblemSchema, "The updated problem."),
    ...problemResponses(409, 412, 413, 415, 422, 428),
  },
});

/** The REST reads of telemetry (services, logs, traces) and problems, under /api/v1. */
export function registerTelemetryRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(services, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("query") };
    return c.json(await getServiceHealth({ ctx: c.get("ctx"), input }), 200);
  });
  app.openapi(logs, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("query") };
    return c.json(await searchLogs({ ctx: c.get("ctx"), input }), 200);
  });
  app.openapi(trace, async (c) =>
    c.json(await getTrace({ ctx: c.get("ctx"), input: c.req.valid("param") }), 200),
  );
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
