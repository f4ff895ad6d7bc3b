import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./env.ts";

/**
 * The OpenAPI 3.1.1 description of /api/v1, generated from the same zod schemas that validate
 * requests. `npm run openapi:emit` commits a copy to docs/openapi.json; a test fails on drift.
 */
export function buildOpenApiDocument(api: OpenAPIHono<AppEnv>, version: string) {
  api.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description:
      "An API key (`sk_…`), or an OAuth 2.1 access token issued for this API's resource (`<base URL>/api/v1`, RFC 8707) — e.g. by `patchbay login` (device authorization). Metadata: `/.well-known/oauth-authorization-server` (RFC 8414) and `/.well-known/oauth-protected-resource/api/v1` (RFC 9728). REST scopes are the key permissions; a token lacking one is 403 `insufficient_scope`. Browser session cookies are not accepted.",
  });
  const doc = api.getOpenAPI31Document({
    openapi: "3.1.1",
    info: {
      title: "patchbay API",
      version,
      description:
        "Manage environments, API keys and customer MCP connections. Errors are RFC 9457 problem documents with a stable `code`.",
    },
    servers: [{ url: "/api/v1", description: "This server" }],
    security: [{ bearer: [] }],
    tags: [
      { name: "Identity", description: "Who is calling." },
      { name: "Environments", description: "Environments of the caller's organisation." },
      { name: "API keys", description: "Secret API keys (shown once)." },
      {
        name: "Audit",
        description:
          "The organisation's audit trail: every change, its actor, target, time and door. Owners and admins only; never secrets.",
      },
      {
        name: "Publishable keys",
        description:
          "Environment keys (`pk_…`, shown once) that only send telemetry (OTLP/HTTP on /v1/traces, /v1/logs, /v1/metrics; see docs/telemetry.md). Safe to embed in applications.",
      },
      {
        name: "MCP connections",
        description:
          "Customer-operated remote MCP servers attached to one environment: discover, approve a subset, enable. Owners and admins only.",
      },
      {
        name: "Tasks",
        description:
          "Runs of the task agent: a frozen snapshot of the environment's ready connections, a fail-closed gate before every call, single-attempt calls.",
      },
      {
        name: "Webhooks",
        description:
          "Organisation webhook endpoints (Standard Webhooks: signed, retried with exponential backoff, logged, redeliverable). Each event's body is under the document's `webhooks`. Owners and admins only.",
      },
    ],
  });
  // OpenAPI 3.1 licences take an SPDX `identifier`; the generator's types predate it.
  Object.assign(doc.info, { license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" } });
  return doc;
}
