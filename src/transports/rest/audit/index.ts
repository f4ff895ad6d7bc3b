import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { listAuditEvents } from "../../../features/audit/list-audit-events.ts";
import {
  AuditEventPageSchema,
  AuditEventQuery,
  OrganizationParams,
} from "../../../features/audit/schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { jsonResponse, problemResponses } from "../../http/openapi.ts";

const list = createRoute({
  method: "get",
  path: "/organizations/{organizationId}/audit-events",
  operationId: "listAuditEvents",
  tags: ["Audit"],
  summary: "List the organisation's audit events, newest first",
  description:
    "Who created, changed, approved, enabled, attested, rotated, deleted or revoked what, when, and through which door (`rest`, `cli`, `mcp`, `web`, `x402`, `system`). Owners and admins with `audit_log:read`; members are refused (403). Filters combine (AND). `from` must be before `to`; an unknown action or channel, an environment that is not yours, or an unknown parameter is `invalid_request`. Details never hold secrets.",
  request: { params: OrganizationParams, query: AuditEventQuery },
  responses: {
    200: jsonResponse(AuditEventPageSchema, "A page of events, newest first."),
    ...problemResponses(),
  },
});

export function registerAuditRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(list, async (c) =>
    c.json(
      await listAuditEvents({
        ctx: c.get("ctx"),
        input: { ...c.req.valid("query"), ...c.req.valid("param") },
      }),
      200,
    ),
  );
}
