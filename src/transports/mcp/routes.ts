import type { Context, Hono } from "hono";
import type { MemberActor } from "../../actor.ts";
import { AppError, isAppError } from "../../errors.ts";
import { MCP_PATH } from "../../oauth-resources.ts";
import type { Permission } from "../../permissions.ts";
import { loadOnce } from "../../platform/load-once.ts";
import { MAX_API_BODY_BYTES } from "../http/api-guards.ts";
import { resolveBearerActor } from "../http/authenticate.ts";
import type { AppEnv } from "../http/env.ts";
import { problemResponse } from "../http/problem.ts";
import {
  bearerChallenge,
  protectedResourceMetadata,
  resourceMetadataPath,
} from "../http/protected-resource.ts";
import { type RateLimits, rateLimitedResponse, stampRateLimit } from "../http/rate-limit.ts";
import { dnsRebindingGuard } from "./dns-rebinding-guard.ts";
import { type McpPost, readMcpPost } from "./request-body.ts";
import { connectionTools } from "./tools/connections/index.ts";

// The MCP SDK's server (and its JSON Schema conversion) loads with the first request; held
// after, as `import()` resolves the module again on every call.
const loadServing = loadOnce(() => import("./serve-request.ts"));

const writeTools = new Set(connectionTools.filter((t) => t.access === "write").map((t) => t.name));

/**
 * The inbound MCP server: Streamable HTTP, stateless, JSON responses. Only POST carries
 * messages; without sessions there is no stream to open (GET) or session to end (DELETE).
 */
export function mountMcp(app: Hono<AppEnv>, limits?: RateLimits): void {
  app.get(resourceMetadataPath("mcp"), (c) =>
    c.json(protectedResourceMetadata(c.get("deps").config.baseUrl, "mcp"), 200, {
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
    // The same per-key and per-organisation quotas as /api/v1: a key spends one budget on both.
    const verdict = limits?.admit(actor);
    if (limits && verdict && verdict.violated.length > 0) return rateLimitedResponse(c, limits, verdict);
    // API keys map onto the MCP server's two levels, as do the OAuth scopes patchbay.mcp.write
    // and patchbay.mcp.read: `mcp_connections:manage` is write (and so read), `…:read` is read.
    const write = actor.permissions.has("mcp_connections:manage");
    if (!write && !actor.permissions.has("mcp_connections:read")) {
      if (actor.oauth) return insufficientScope(c, "patchbay.mcp.read");
      throw new AppError(
        "forbidden",
        "This credential has no MCP access: it needs mcp_connections:read or mcp_connections:manage.",
        { requiredPermission: "mcp_connections:read" },
      );
    }
    const post = await readMcpPost(c.req.raw);
    if (actor.oauth && !write && (await callsWriteTool(post))) {
      return insufficientScope(c, "patchbay.mcp.write");
    }
    // Served for exactly this caller, who travels with the request to every handler (caller.ts)
    // though the servers are pooled (serve-request.ts). Read tools need read *or* write, while the
    // read verbs check `mcp_connections:read` exactly, so write access also grants that one
    // permission here; owner/admin and tenancy stay the verbs' checks.
    const permissions = new Set<Permission>(actor.permissions).add("mcp_connections:read");
    const ctx = {
      deps: c.get("deps"),
      actor: { ...actor, permissions },
      channel: "mcp" as const,
      requestId: c.get("requestId"),
    };
    const { serveMcpRequest } = await loadServing();
    const response = await serveMcpRequest(post, ctx);
    if (limits && verdict) stampRateLimit(response.headers, limits, verdict);
    return response;
  });
}

/** The same bearer credentials as /api/v1 (tokens for the /mcp audience); a 401 points at the RFC 9728 metadata. */
async function authenticateMcp(c: Context<AppEnv>): Promise<MemberActor | Response> {
  const header = c.req.header("authorization");
  const baseUrl = c.get("deps").config.baseUrl;
  try {
    return await resolveBearerActor(c.get("deps"), header, "mcp");
  } catch (error) {
    if (!isAppError(error) || error.code !== "unauthorized") throw error;
    const challenge = bearerChallenge(baseUrl, "mcp", header ? { error: "invalid_token" } : undefined);
    return problemResponse(c, error, { "www-authenticate": challenge });
  }
}

/**
 * 403 with the scope to ask for (the MCP authorization spec's scope challenge), so a client can
 * send the person through consent again for more.
 */
function insufficientScope(c: Context<AppEnv>, scope: "patchbay.mcp.read" | "patchbay.mcp.write"): Response {
  const error = new AppError(
    "insufficient_scope",
    `This access token lacks the scope ${scope}. Reconnect (sign in again) and grant it.`,
    { scope },
  );
  return problemResponse(c, error, {
    "www-authenticate": bearerChallenge(c.get("deps").config.baseUrl, "mcp", {
      error: "insufficient_scope",
      scope,
    }),
  });
}

/**
 * Whether a message of this request calls a write tool, read from the parsed body or else a copy
 * of it (the transport still reads the original). Only asked for read-only OAuth tokens; a body
 * too large or unreadable is left to the transport to refuse.
 */
async function callsWriteTool(post: McpPost): Promise<boolean> {
  let parsed: unknown;
  if (post.json) parsed = post.json.value;
  else {
    const text = await post.request
      .clone()
      .text()
      .catch(() => "");
    if (text.length === 0 || text.length > MAX_API_BODY_BYTES) return false;
    try {
      parsed = JSON.parse(text);
    } catch {
      return false;
    }
  }
  return [parsed].flat().some((message) => {
    if (typeof message !== "object" || message === null) return false;
    const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
    return method === "tools/call" && typeof params?.name === "string" && writeTools.has(params.name);
  });
}
