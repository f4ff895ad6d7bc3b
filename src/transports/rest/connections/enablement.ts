import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { ConnectionParams, ConnectionSchema, EnablementBody } from "../../../features/connections/schemas.ts";
import { setConnectionEnabled } from "../../../features/connections/set-connection-enabled.ts";
import type { AppEnv } from "../../http/env.ts";
import { ifMatch } from "../../http/if-match.ts";
import { jsonBody, revisionedResponse } from "../../http/openapi.ts";
import { base, mutation, mutationProblems, tags, withEtag } from "./shared.ts";

const route = createRoute({
  method: "put",
  path: `${base}/{connectionId}/enablement`,
  operationId: "setMcpConnectionEnablement",
  tags,
  summary:
    "Enable or disable (enabling needs a current approval, a credential if required, and room under the limits)",
  ...mutation,
  request: { params: ConnectionParams, body: jsonBody(EnablementBody) },
  responses: { 200: revisionedResponse(ConnectionSchema, "The connection."), ...mutationProblems },
});

export const registerEnablement = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("json"), revision: ifMatch(c) };
    return c.json(withEtag(c, await setConnectionEnabled({ ctx: c.get("ctx"), input })), 200);
  });
