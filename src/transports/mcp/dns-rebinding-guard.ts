import type { MiddlewareHandler } from "hono";
import { AppError } from "../../errors.ts";
import type { AppEnv } from "../http/env.ts";

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * DNS-rebinding protection for /mcp (the MCP transport spec's MUST; the SDK leaves it to
 * middleware). A browser page on another site must not reach a local patchbay through a
 * hostname that resolves to loopback:
 *
 * - an `Origin` header, when sent, must be the public base URL's origin (or, when that is a
 *   loopback URL, any loopback origin);
 * - when the base URL is loopback (a developer's machine), `Host` must be a loopback name too.
 *   A public deployment does not pin `Host`: proxies differ, and bearer tokens are never sent
 *   by a browser on its own, so a rebound request carries no credential.
 */
export function dnsRebindingGuard(baseUrl: string): MiddlewareHandler<AppEnv> {
  const base = new URL(baseUrl);
  const loopbackBase = loopbackHosts.has(base.hostname);
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (origin !== undefined && origin !== base.origin && !(loopbackBase && isLoopbackOrigin(origin))) {
      throw new AppError("forbidden", "Requests from this Origin are not accepted.", { origin });
    }
    // The Node adapter builds the request URL from the Host header.
    if (loopbackBase && !loopbackHosts.has(new URL(c.req.url).hostname)) {
      throw new AppError(
        "forbidden",
        "This local server only answers requests addressed to a loopback host.",
      );
    }
    await next();
  };
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    return loopbackHosts.has(new URL(origin).hostname);
  } catch {
    return false;
  }
}
