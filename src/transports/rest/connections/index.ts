import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { approveConnectionTools } from "../../../features/connections/approve-connection-tools.ts";
import { createConnection } from "../../../features/connections/create-connection.ts";
import {
  deleteConnection,
  previewConnectionDeletion,
} from "../../../features/connections/delete-connection.ts";
import { discoverConnectionTools } from "../../../features/connections/discover-connection-tools.ts";
import { getConnection, listConnections } from "../../../features/connections/read-connections.ts";
import {
  ApproveBody,
  ConnectionParams,
  ConnectionSchema,
  CreateConnectionBody,
  CredentialBody,
  DeletionPreviewSchema,
  DiscoverySchema,
  EnablementBody,
  UpdateConnectionBody,
} from "../../../features/connections/schemas.ts";
import { setConnectionCredential } from "../../../features/connections/set-connection-credential.ts";
import { setConnectionEnabled } from "../../../features/connections/set-connection-enabled.ts";
import { updateConnection } from "../../../features/connections/update-connection.ts";
import { EnvironmentParams } from "../../../features/environments/schemas.ts";
import { PageQuery } from "../../../schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { ifMatch } from "../../http/if-match.ts";
import { jsonBody, jsonResponse, page, problemResponses, revisionedResponse } from "../../http/openapi.ts";
import { idempotentChange, revisionedChange, withEtag } from "../operation.ts";

const base = "/environments/{environmentId}/mcp-connections";
const tags = ["MCP connections"];
const changeProblems = problemResponses(409, 412, 413, 415, 422, 428);

export function registerConnectionRoutes(app: OpenAPIHono<AppEnv>): void {
  const list = createRoute({
    method: "get",
    path: base,
    operationId: "listMcpConnections",
    tags,
    summary: "List the environment's MCP connections",
    request: { params: EnvironmentParams, query: PageQuery },
    responses: {
      200: jsonResponse(
        page(ConnectionSchema, "McpConnectionPage"),
        "A page of connections, each with its readiness.",
      ),
      ...problemResponses(),
    },
  });
  app.openapi(list, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("query") };
    return c.json(await listConnections({ ctx: c.get("ctx"), input }), 200);
  });

  const create = createRoute({
    method: "post",
    path: base,
    operationId: "createMcpConnection",
    tags,
    summary: "Create an MCP connection (disabled, no credential, revision 1)",
    ...idempotentChange,
    request: {
      params: EnvironmentParams,
      body: {
        ...jsonBody(CreateConnectionBody),
        content: {
          "application/json": {
            schema: CreateConnectionBody,
            example: {
              alias: "runbooks",
              displayName: "Runbooks",
              endpointUrl: "https://mcp.example.com/mcp",
              auth: { kind: "bearer" },
            },
          },
        },
      },
    },
    responses: {
      201: revisionedResponse(ConnectionSchema, "The new connection."),
      ...problemResponses(409, 413, 415, 422),
    },
  });
  app.openapi(create, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("json") };
    const connection = await createConnection({ ctx: c.get("ctx"), input });
    c.header("location", `/api/v1/environments/${connection.environmentId}/mcp-connections/${connection.id}`);
    return c.json(withEtag(c, connection), 201);
  });

  const get = createRoute({
    method: "get",
    path: `${base}/{connectionId}`,
    operationId: "getMcpConnection",
    tags,
    summary: "Get an MCP connection with its revision and readiness",
    request: { params: ConnectionParams },
    responses: { 200: revisionedResponse(ConnectionSchema, "The connection."), ...problemResponses() },
  });
  app.openapi(get, async (c) =>
    c.json(withEtag(c, await getConnection({ ctx: c.get("ctx"), input: c.req.valid("param") })), 200),
  );

  const update = createRoute({
    method: "patch",
    path: `${base}/{connectionId}`,
    operationId: "updateMcpConnection",
    tags,
    summary: "Update displayName, endpointUrl or auth (endpoint/auth changes need a disabled connection)",
    description:
      "Changing `endpointUrl` or `auth` requires the connection to be disabled (409 `connection_enabled`) and makes the approval stale. Changing the auth kind, or moving the endpoint to another origin, destroys the credential.",
    ...revisionedChange,
    request: { params: ConnectionParams, body: jsonBody(UpdateConnectionBody) },
    responses: { 200: revisionedResponse(ConnectionSchema, "The updated connection."), ...changeProblems },
  });
  app.openapi(update, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("json"), revision: ifMatch(c) };
    return c.json(withEtag(c, await updateConnection({ ctx: c.get("ctx"), input })), 200);
  });

  const remove = createRoute({
    method: "delete",
    path: `${base}/{connectionId}`,
    operationId: "deleteMcpConnection",
    tags,
    summary: "Delete a disabled connection, confirmed by a deletion receipt",
    ...revisionedChange,
    parameters: [
      ...revisionedChange.parameters,
      {
        name: "Deletion-Receipt",
        in: "header" as const,
        required: true,
        description: "The receipt from `POST …/deletion-previews` for this revision (single use, 5 minutes).",
        schema: { type: "string" as const },
      },
    ],
    request: { params: ConnectionParams },
    responses: { 204: { description: "Deleted." }, ...changeProblems },
  });
  app.openapi(remove, async (c) => {
    const input = {
      ...c.req.valid("param"),
      revision: ifMatch(c),
      receipt: c.req.header("deletion-receipt"),
    };
    await deleteConnection({ ctx: c.get("ctx"), input });
    return c.body(null, 204);
  });

  const discover = createRoute({
    method: "post",
    path: `${base}/{connectionId}/discoveries`,
    operationId: "discoverMcpConnectionTools",
    tags,
    summary: "Discover the server's tools for review (does not change the revision)",
    ...revisionedChange,
    request: { params: ConnectionParams },
    responses: {
      201: jsonResponse(DiscoverySchema, "The server-derived tool list."),
      ...problemResponses(409, 412, 422, 428, 502, 504),
    },
  });
  app.openapi(discover, async (c) => {
    const input = { ...c.req.valid("param"), revision: ifMatch(c) };
    return c.json(await discoverConnectionTools({ ctx: c.get("ctx"), input }), 201);
  });

  const approve = createRoute({
    method: "post",
    path: `${base}/{connectionId}/tool-approvals`,
    operationId: "approveMcpConnectionTools",
    tags,
    summary: "Approve a subset (1–128) of a current discovery's tools",
    ...revisionedChange,
    request: { params: ConnectionParams, body: jsonBody(ApproveBody) },
    responses: {
      200: revisionedResponse(ConnectionSchema, "The connection with its new approval."),
      ...changeProblems,
    },
  });
  app.openapi(approve, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("json"), revision: ifMatch(c) };
    return c.json(withEtag(c, await approveConnectionTools({ ctx: c.get("ctx"), input })), 200);
  });

  const enablement = createRoute({
    method: "put",
    path: `${base}/{connectionId}/enablement`,
    operationId: "setMcpConnectionEnablement",
    tags,
    summary:
      "Enable or disable (enabling needs a current approval, a credential if required, and room under the limits)",
    ...revisionedChange,
    request: { params: ConnectionParams, body: jsonBody(EnablementBody) },
    responses: { 200: revisionedResponse(ConnectionSchema, "The connection."), ...changeProblems },
  });
  app.openapi(enablement, async (c) => {
    const input = { ...c.req.valid("param"), ...c.req.valid("json"), revision: ifMatch(c) };
    return c.json(withEtag(c, await setConnectionEnabled({ ctx: c.get("ctx"), input })), 200);
  });

  const credential = createRoute({
    method: "put",
    path: `${base}/{connectionId}/credential`,
    operationId: "setMcpConnectionCredential",
    tags,
    summary: "Set or rotate the credential (validated against the server first; never echoed)",
    ...revisionedChange,
    request: { params: ConnectionParams, body: jsonBody(CredentialBody) },
    responses: {
      200: revisionedResponse(ConnectionSchema, "The connection (the credential itself is never returned)."),
      ...problemResponses(409, 412, 413, 415, 422, 428, 502, 504),
    },
  });
  app.openapi(credential, async (c) => {
    c.header("cache-control", "no-store");
    const input = { ...c.req.valid("param"), ...c.req.valid("json"), revision: ifMatch(c) };
    return c.json(withEtag(c, await setConnectionCredential({ ctx: c.get("ctx"), input })), 200);
  });

  const deletionPreview = createRoute({
    method: "post",
    path: `${base}/{connectionId}/deletion-previews`,
    operationId: "previewMcpConnectionDeletion",
    tags,
    summary: "Preview deletion effects and get a short-lived receipt (does not change the revision)",
    ...revisionedChange,
    request: { params: ConnectionParams },
    responses: {
      201: jsonResponse(DeletionPreviewSchema, "Effects and a receipt for DELETE."),
      ...changeProblems,
    },
  });
  app.openapi(deletionPreview, async (c) => {
    const input = { ...c.req.valid("param"), revision: ifMatch(c) };
    return c.json(await previewConnectionDeletion({ ctx: c.get("ctx"), input }), 201);
  });
}
