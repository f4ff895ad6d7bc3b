import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { deleteConnection } from "../../../features/connections/delete-connection.ts";
import { ConnectionParams } from "../../../features/connections/schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { ifMatch } from "../../http/if-match.ts";
import { base, mutation, mutationProblems, tags } from "./shared.ts";

const route = createRoute({
  method: "delete",
  path: `${base}/{connectionId}`,
  operationId: "deleteMcpConnection",
  tags,
  summary: "Delete a disabled connection, confirmed by a deletion receipt",
  ...mutation,
  parameters: [
    ...mutation.parameters,
    {
      name: "Deletion-Receipt",
      in: "header" as const,
      required: true,
      description: "The receipt from `POST …/deletion-previews` for this revision (single use, 5 minutes).",
      schema: { type: "string" as const },
    },
  ],
  request: { params: ConnectionParams },
  responses: { 204: { description: "Deleted." }, ...mutationProblems },
});

export const registerDelete = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const input = {
      ...c.req.valid("param"),
      revision: ifMatch(c),
      receipt: c.req.header("deletion-receipt"),
    };
    await deleteConnection({ ctx: c.get("ctx"), input });
    return c.body(null, 204);
  });
