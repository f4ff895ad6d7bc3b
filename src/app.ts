import { Hono } from "hono";
import type { Deps } from "./deps.ts";
import { AppError } from "./errors.ts";
import { MCP_PATH } from "./oauth-resources.ts";
import { pingDatabase } from "./platform/db/client.ts";
import { databaseUnavailable } from "./platform/db/errors.ts";
import { accessLog } from "./transports/http/access-log.ts";
import { allowedMethods } from "./transports/http/allowed-methods.ts";
import { apiBodyLimit, requireJsonBodies } from "./transports/http/api-guards.ts";
import { authenticate } from "./transports/http/authenticate.ts";
import { docsPage } from "./transports/http/docs-page.ts";
import type { AppEnv } from "./transports/http/env.ts";
import { loadShedding } from "./transports/http/load-shedding.ts";
import { createApiRouter } from "./transports/http/openapi.ts";
import { buildOpenApiDocument } from "./transports/http/openapi-document.ts";
import { handleError } from "./transports/http/problem.ts";
import { createRateLimits, rateLimit } from "./transports/http/rate-limit.ts";
import { requestId } from "./transports/http/request-id.ts";
import { refuseUnstorableText } from "./transports/http/unstorable-text.ts";
import { mountMcp } from "./transports/mcp/routes.ts";
import { createOAuthRoutes } from "./transports/oauth/routes.ts";
import { createOtlpRouter } from "./transports/otlp/otlp.ts";
import { registerApiKeyRoutes } from "./transports/rest/api-keys/index.ts";
import { registerAuditRoutes } from "./transports/rest/audit/index.ts";
import { registerConnectionRoutes } from "./transports/rest/connections/index.ts";
import { registerEnvironmentRoutes } from "./transports/rest/environments/index.ts";
import { registerMeRoute } from "./transports/rest/me.ts";
import { registerPublishableKeyRoutes } from "./transports/rest/publishable-keys/index.ts";
import { registerRemediationRoutes } from "./transports/rest/remediations/index.ts";
import { registerRepositoryRoutes } from "./transports/rest/repositories/index.ts";
import { githubCallbacks } from "./transports/rest/source-hosting/callbacks.ts";
import { registerGithubRoutes } from "./transports/rest/source-hosting/install-links.ts";
import { registerTaskRoutes } from "./transports/rest/tasks/index.ts";
import { registerTelemetryRoutes } from "./transports/rest/telemetry/index.ts";
import { registerWebhookRoutes } from "./transports/rest/webhooks/index.ts";
import { notFoundPage, wantsNotFoundPage } from "./transports/web/not-found.ts";
import { createWebRoutes } from "./transports/web/routes.ts";
import { createX402Router } from "./transports/x402/router.ts";
import { version } from "./version.ts";

/** The authenticated REST surface. Built without deps so the OpenAPI document can be emitted offline. */
export function createApiRoutes() {
  const api = createApiRouter();
  registerMeRoute(api);
  registerEnvironmentRoutes(api);
  registerApiKeyRoutes(api);
  registerConnectionRoutes(api);
  registerTaskRoutes(api);
  registerPublishableKeyRoutes(api);
  registerTelemetryRoutes(api);
  registerRepositoryRoutes(api);
  registerRemediationRoutes(api);
  registerGithubRoutes(api);
  registerWebhookRoutes(api);
  registerAuditRoutes(api);
  return api;
}

export function createApp(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError(handleError);
  const allowedOn = allowedMethods(() => app.routes, "/api/v1/");
  app.notFound((c) => {
    const allow = allowedOn(c.req.path);
    if (allow.length > 0) {
      throw new AppError(
        "method_not_allowed",
        `This path answers ${allow.join(", ")}, not ${c.req.method}.`,
        {
          allow,
        },
      );
    }
    // A person who followed a bad link gets a page; API clients keep problem+json.
    if (wantsNotFoundPage(c)) return notFoundPage(c);
    throw new AppError("not_found", "No such route.");
  });
  app.use("*", (c, next) => {
    c.set("deps", deps);
    return next();
  });
  app.use("*", requestId());
  app.use("*", accessLog());
  // Past the bound, the doors that do work answer 503 `overloaded` at once — x402 before its
  // payment gate, so a shed request is never charged. Health, OTLP (its own admission in
  // telemetry/write-queue.ts), OAuth and the web UI are not shed.
  const shed = loadShedding(deps.config.traffic.maxConcurrentRequests);
  for (const path of ["/api/v1/*", MCP_PATH, "/x402/*"]) app.use(path, shed);
  const limits = createRateLimits(deps.config.traffic);

  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.get("/readyz", async (c) => {
    try {
      await pingDatabase(deps.database);
      return c.json({ status: "ok", database: deps.database.kind });
    } catch {
      throw databaseUnavailable();
    }
  });

  const api = createApiRoutes();
  // Generated on the first request for it, not at every start (~0.1 s of zod-to-openapi).
  let openapi: string | undefined;
  app.get("/api/v1/openapi.json", (c) => {
    openapi ??= JSON.stringify(buildOpenApiDocument(api, version));
    return c.body(openapi, 200, { "content-type": "application/json" });
  });
  app.route("/api/v1/docs", docsPage());

  app.use(
    "/api/v1/*",
    apiBodyLimit(),
    requireJsonBodies(),
    authenticate(),
    rateLimit(limits),
    refuseUnstorableText("json"),
  );
  app.route("/api/v1", api);
  // OTLP/HTTP receiver: publishable keys, OTLP Status errors (not /api/v1's auth or problems).
  app.route("/v1", createOtlpRouter(deps.telemetry));
  // GitHub's setup callback (a browser) and webhook (signed): not bearer-authenticated.
  app.route("/integrations/github", githubCallbacks(deps));
  mountMcp(app, limits);
  // Agents pay per call (x402); the catalog and /llms.txt are free.
  const x402 = createX402Router(deps);
  app.route("/x402", x402.router);
  app.route("/llms.txt", x402.llms);
  // The OAuth 2.1 authorization server (/oauth/*, its metadata) and its consent and device pages.
  app.route("/", createOAuthRoutes(deps));
  // The web UI: cookie sessions and CSRF-checked forms, on its own paths only.
  app.route("/", createWebRoutes());
  return app;
}
