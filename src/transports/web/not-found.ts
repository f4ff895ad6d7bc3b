import type { Context } from "hono";
import { AppError } from "../../errors.ts";
import type { AppEnv } from "../http/env.ts";
import type { WebEnv } from "./env.ts";
import { errorPage } from "./error-page.ts";
import { securityHeaders } from "./security-headers.ts";
import { webSession } from "./session.ts";

/** The machine doors: an unknown path under them stays problem+json whatever the client accepts. */
const machinePaths =
  /^\/(?:api(?:\/|$)|v1(?:\/|$)|mcp(?:\/|$)|x402(?:\/|$)|oauth(?:\/|$)|\.well-known\/|integrations\/|llms\.txt|healthz|readyz)/;

/**
 * A browser asking for a page that does not exist: a GET that accepts HTML, outside the API,
 * MCP, OTLP, x402 and OAuth paths. API clients (`Accept: application/json`, or none) keep the
 * problem+json answer.
 */
export function wantsNotFoundPage(c: Context<AppEnv>): boolean {
  if (c.req.method !== "GET" && c.req.method !== "HEAD") return false;
  if (machinePaths.test(c.req.path)) return false;
  return (c.req.header("accept") ?? "").toLowerCase().includes("text/html");
}

/** The 404 page in the UI's layout, with the visitor's session (header and navigation) if any. */
export async function notFoundPage(appContext: Context<AppEnv>): Promise<Response> {
  const c = appContext as unknown as Context<WebEnv>;
  await securityHeaders()(c, async () => {
    await webSession()(c, async () => {
      c.res = await errorPage(
        c,
        new AppError(
          "not_found",
          "There is no page at this address. Check the link, or start from your organisations.",
        ),
      );
    });
  });
  return c.res;
}
