import {
  FacilitatorResponseError,
  type HTTPProcessResult,
  type HTTPRequestContext,
  type x402HTTPResourceServer,
} from "@x402/core/server";
import type { Context } from "hono";
import type { RequestAdapter } from "./http-adapter.ts";
import { facilitatorUnavailable } from "./payment-responses.ts";

export function requestContext(c: Context, adapter: RequestAdapter): HTTPRequestContext {
  return { adapter, path: c.req.path, method: adapter.getMethod() };
}

/** The SDK's request processing; a facilitator outage is our 503 (Retry-After), never its message. */
export async function processRequest(
  http: x402HTTPResourceServer,
  ctx: HTTPRequestContext,
): Promise<HTTPProcessResult> {
  try {
    return await http.processHTTPRequest(ctx);
  } catch (error) {
    if (error instanceof FacilitatorResponseError) throw facilitatorUnavailable();
    throw error;
  }
}

/** Routes that declare Bazaar discovery get the SDK's extension, as `@x402/hono` would do. */
export async function registerBazaarIfDeclared(http: x402HTTPResourceServer): Promise<void> {
  const routes = Object.values(http.routes as Record<string, { extensions?: Record<string, unknown> }>);
  if (!routes.some((r) => r.extensions?.bazaar !== undefined)) return;
  const { bazaarResourceServerExtension, validateBazaarRouteExtensions } = await import(
    "@x402/extensions/bazaar"
  );
  if (!http.server.hasExtension("bazaar")) http.server.registerExtension(bazaarResourceServerExtension);
  validateBazaarRouteExtensions(http.routes);
}
