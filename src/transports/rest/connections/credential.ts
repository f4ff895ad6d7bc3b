import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { ConnectionParams, ConnectionSchema, CredentialBody } from "../../../features/connections/schemas.ts";
import { setConnectionCredential } from "../../../features/connections/set-connection-credential.ts";
import type { AppEnv } from "../../http/env.ts";
import { ifMatch } from "../../http/if-match.ts";
import { jsonBody, problemResponses, revisionedResponse } from "../../http/openapi.ts";
import { base, mutation, tags, withEtag } from "./shared.ts";

const route = createRoute({
  method: "put",
  path: `${base}/{connectionId}/credential`,
  operationId: "setMcpConnectionCredential",
  tags,
  summary: "Set or rotate the credential (validated against the server first; never echoed)",
  ...mutation,
  request: { params: ConnectionParams, body: jsonBody(CredentialBody) },
  responses: {
    200: revisionedResponse(ConnectionSchema, "The connection (the credential itself is never returned)."),
    ...problemResponses(409, 412, 413, 415, 422, 428, 502, 504),
  },
});

export const registerCredential = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    c.header("cache-control", "no-store");
    const input = { ...c.req.valid("param"), ...c.req.valid("json"), revision: ifMatch(c) };
    return c.json(withEtag(c, await setConnectionCredential({ ctx: c.get("ctx"), input })), 200);
  });
