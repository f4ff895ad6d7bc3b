import type { Context, MiddlewareHandler } from "hono";
import type { Connection } from "../../../features/connections/schemas.ts";
import type { AppEnv } from "../../http/env.ts";
import { idempotent } from "../../http/idempotency.ts";
import { etag } from "../../http/if-match.ts";
import { idempotencyKeyParam, ifMatchParam, problemResponses } from "../../http/openapi.ts";

export const base = "/environments/{environmentId}/mcp-connections";
export const tags = ["MCP connections"];

/** Every mutation of an existing connection: Idempotency-Key (middleware) and If-Match (handler). */
export const mutation = {
  middleware: [idempotent()] as MiddlewareHandler<AppEnv>[],
  parameters: [idempotencyKeyParam, ifMatchParam],
};

export const mutationProblems = problemResponses(409, 412, 413, 415, 422, 428);

/** Sets `ETag: "<revision>"` for the connection about to be returned. */
export function withEtag(c: Context<AppEnv>, connection: Connection): Connection {
  c.header("etag", etag(connection.revision));
  return connection;
}
