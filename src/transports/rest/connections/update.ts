import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import {
  ConnectionParams,
  ConnectionSchema,
  UpdateConnectionBody,
} from "../../../features/connections/schemas.ts";
import { updateConnection } from "../../../features/connections/update-connection.ts";
import type { AppEnv } from "../../http/env.ts";
import { ifMatch } from "../../http/if-match.ts";
import { jsonBody, revisionedResponse } from "../../http/openapi.ts";
import { base, mutation, mutationProblems, tags, withEtag } from "./shared.ts";

const route = createRoute({
  method: "patch",
  path: `${base}/{connectionId}`,
  operationId: "updateMcpConnection",
  tags,
  summary: "Update displayName, endpointUrl or auth (endpoint/auth changes need a disabled connection)",
  description:
    "Changing `endpointUrl` or `auth` requires the connection to be disabled (409 `connection_enabled`) and makes the approval stale. Changing the auth kind, or moving the endpoint to another origin, destroys the credential.",
  ...mutation,
  request: { params: ConnectionParams, body: jsonBody(UpdateConnectionBody) },
  responses: { 200: revisionedResponse(ConnectionSchema, "The updated connection."), ...mutationProblems },
});

export const registerUpdate = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("json"), revision: ifMatch(c) };
    return c.json(withEtag(c, await updateConnection({ ctx: c.get("ctx"), input })), 200);
  });
