import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { EnvironmentParams } from "../../../features/environments/schemas.ts";
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
import { jsonResponse, problemResponses } from "../../http/openapi.ts";

const tags = ["Telemetry"];
const base = "/environments/{environmentId}";
const readNote = "Needs `telemetry:read`; any member of the organisation may read.";

const services = createRoute({
  method: "get",
  path: `${base}/services`,
  operationId: "listServiceHealth",
  tags,
  summary: "Health of each service: request rate, error rate, p50/p95/p99 latency over a window, last seen",
  description: `Figures come from entry spans (server and consumer spans, and trace roots) in the window ending now. Services are listed by name, a page at a time. ${readNote}`,
  request: { params: EnvironmentParams, query: ServiceHealthQuerySchema },
  responses: { 200: jsonResponse(ServiceHealthPageSchema, "A page of services."), ...problemResponses() },
});

const logs = createRoute({
  method: "get",
  path: `${base}/logs`,
  operationId: "searchLogs",
  tags,
  summary: "Search log records by time range, service, minimum severity, text and trace id",
  description: `Newest first, a page at a time. The range defaults to the last hour. ${readNote}`,
  request: { params: EnvironmentParams, query: LogSearchQuerySchema },
  responses: { 200: jsonResponse(LogPageSchema, "A page of log records."), ...problemResponses() },
});

const trace = createRoute({
  method: "get",
  path: `${base}/traces/{traceId}`,
  operationId: "getTrace",
  tags,
  summary: "One trace as its span tree",
  description: `404 \`not_found\` when no span of the trace is stored (never sent, or past retention). ${readNote}`,
  request: { params: z.object({ ...EnvironmentParams.shape, ...TraceParamsSchema.shape }) },
  responses: { 200: jsonResponse(TraceSchema, "The trace."), ...problemResponses() },
});

export function registerQueryRoutes(app: OpenAPIHono<AppEnv>): void {
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
}
