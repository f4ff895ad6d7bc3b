import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Context, Hono } from "hono";
import type { Actor } from "../context.ts";
import { AppError, isAppError } from "../errors.ts";
import { MAX_API_BODY_BYTES } from "../http/api-guards.ts";
import { resolveBearerActor } from "../http/authenticate.ts";
import type { AppEnv } from "../http/env.ts";
import { problemResponse } from "../http/problem.ts";
import { mcpAccess, mcpActor } from "./access.ts";
import { dnsRebindingGuard } from "./dns-rebinding-guard.ts";
import {
  bearerChallenge,
  MCP_PATH,
  MCP_RESOURCE_METADATA_PATH,
  protectedResourceMetadata,
} from "./protected-resource.ts";
import { buildMcpServer } from "./server.ts";

/**
 * The inbound MCP server: Streamable HTTP, stateless, JSON responses. Only POST carries
 * messages; without sessions there is no stream to open (GET) or session to end (DELETE).
 */
export function mountMcp(app: Hono<AppEnv>): void {
  app.get(MCP_RESOURCE_METADATA_PATH, (c) =>
    c.json(protectedResourceMetadata(c.get("deps").config.baseUrl), 200, {
      "cache-control": "public, max-age=3600",
      "access-control-allow-origin": "*",
    }),
  );
  app.use(MCP_PATH, (c, next) => dnsRebindingGuard(c.get("deps").config.baseUrl)(c, next));
  app.all(MCP_PATH, async (c) => {
    if (c.req.method !== "POST") {
      return problemResponse(
        c,
        new AppError("method_not_allowed", "This MCP server is stateless: send JSON-RPC messages with POST."),
        { allow: "POST" },
      );
    }
    const actor = await authenticateMcp(c);
    if (actor instanceof Response) return actor;
    const access = mcpAccess(actor);
    if (!access.read) {
      throw new AppError(
        "forbidden",
        "This credential has no MCP access: it needs mcp_connections:read or mcp_connections:manage.",
        { requiredPermission: "mcp_connections:read" },
      );
    }
    const deps = c.get("deps");
    const server = buildMcpServer({
      ctx: { deps, actor: mcpActor(actor), requestId: c.get("requestId") },
      access,
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MAX_API_BODY_BYTES,
    });
    try {
      await server.connect(transport);
      // In JSON mode this resolves once every response of the request is ready.
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  });
}

/** The same bearer credentials as /api/v1; a 401 points at the RFC 9728 metadata. */
async function authenticateMcp(c: Context<AppEnv>): Promise<Actor | Response> {
  const header = c.req.header("authorization");
  try {
    return await resolveBearerActor(c.get("deps"), header);
  } catch (error) {
    if (!isAppError(error) || error.code !== "unauthorized") throw error;
    const challenge = bearerChallenge(c.get("deps").config.baseUrl, Boolean(header));
    return problemResponse(c, error, { "www-authenticate": challenge });
  }
}
