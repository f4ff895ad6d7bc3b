import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/env.ts";
import { idempotent } from "../http/idempotency.ts";
import { etag } from "../http/if-match.ts";
import { idempotencyKeyParam, ifMatchParam } from "../http/openapi.ts";

/**
 * A change under `Idempotency-Key`: the middleware enforces the header (so its errors carry
 * DESIGN's codes), the parameter declares it in the OpenAPI document.
 */
export const idempotentChange = {
  middleware: [idempotent()] as MiddlewareHandler<AppEnv>[],
  parameters: [idempotencyKeyParam],
};

/** A change of a revisioned resource: `Idempotency-Key`, and `If-Match` read by the handler (`ifMatch`). */
export const revisionedChange = { ...idempotentChange, parameters: [idempotencyKeyParam, ifMatchParam] };

/** Sets `ETag: "<revision>"` for the resource about to be returned. */
export function withEtag<T extends { revision: number }>(c: Context<AppEnv>, resource: T): T {
  c.header("etag", etag(resource.revision));
  return resource;
}
