import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { previewConnectionDeletion } from "../../../features/connections/preview-connection-deletion.ts";
import { ConnectionParams, DeletionPreviewSchema } from "../../../features/connections/schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { ifMatch } from "../../http/if-match.ts";
import { jsonResponse } from "../../http/openapi.ts";
import { base, mutation, mutationProblems, tags } from "./shared.ts";

const route = createRoute({
  method: "post",
  path: `${base}/{connectionId}/deletion-previews`,
  operationId: "previewMcpConnectionDeletion",
  tags,
  summary: "Preview deletion effects and get a short-lived receipt (does not change the revision)",
  ...mutation,
  request: { params: ConnectionParams },
  responses: {
    201: jsonResponse(DeletionPreviewSchema, "Effects and a receipt for DELETE."),
    ...mutationProblems,
  },
});

export const registerDeletionPreview = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const input = { ...c.req.valid("param"), revision: ifMatch(c) };
    return c.json(await previewConnectionDeletion({ ctx: c.get("ctx"), input }), 201);
  });
