import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { approveConnectionTools } from "../../../features/connections/approve-connection-tools.ts";
import { ApproveBody, ConnectionParams, ConnectionSchema } from "../../../features/connections/schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { ifMatch } from "../../http/if-match.ts";
import { jsonBody, revisionedResponse } from "../../http/openapi.ts";
import { base, mutation, mutationProblems, tags, withEtag } from "./shared.ts";

const route = createRoute({
  method: "post",
  path: `${base}/{connectionId}/tool-approvals`,
  operationId: "approveMcpConnectionTools",
  tags,
  summary: "Approve a subset (1–128) of a current discovery's tools",
  ...mutation,
  request: { params: ConnectionParams, body: jsonBody(ApproveBody) },
  responses: {
    200: revisionedResponse(ConnectionSchema, "The connection with its new approval."),
    ...mutationProblems,
  },
});

export const registerApprove = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("json"), revision: ifMatch(c) };
    return c.json(withEtag(c, await approveConnectionTools({ ctx: c.get("ctx"), input })), 200);
  });
