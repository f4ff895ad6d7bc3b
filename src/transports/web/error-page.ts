import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { AppError } from "../../errors.ts";
import { asKnownError } from "../../platform/db/errors.ts";
import type { WebEnv } from "./env.ts";
import { html } from "./html.ts";
import { renderPage } from "./layout.ts";
import { loginUrl } from "./session.ts";

const headings: Partial<Record<number, string>> = {
  400: "That request could not be understood",
  403: "Not allowed",
  404: "Not found",
  409: "That cannot be done right now",
  410: "This link no longer works",
  412: "Changed since you loaded the page",
  413: "Too much data",
  429: "Too many attempts",
  503: "Unavailable for a moment",
};

/** A whole page for an error no form could show next to its fields. */
export async function errorPage(c: Context<WebEnv>, error: AppError): Promise<Response> {
  const status = error.status as ContentfulStatusCode;
  // A person's permissions are their role's (web-actor.ts): a missing one means the role falls
  // short, which says more to them than the permission's name.
  const message =
    error.code === "forbidden" && error.details?.requiredPermission
      ? "Only an owner or administrator of this organisation may do this. Ask one of them if you need it done."
      : error.message;
  if (typeof error.details?.retryAfterSeconds === "number") {
    c.header("retry-after", String(error.details.retryAfterSeconds));
  }
  return renderPage(c, {
    title: headings[status] ?? (status >= 500 ? "Something went wrong" : "That did not work"),
    status,
    body: html`<div class="card">
  <p>${message}</p>
  <p class="muted">Error <code>${error.code}</code> · request <code>${c.get("requestId")}</code></p>
  <p><a href="/">Go to your organisations</a></p>
</div>`,
  });
}

/**
 * The web pages' error handler: an AppError becomes a page with its message and status (a
 * signed-out visitor is sent to sign in); an unexpected fault is logged and shown as a 500 page
 * that names only the request id, never the error's text.
 */
export async function handleWebError(thrown: Error, c: Context<WebEnv>): Promise<Response> {
  const error = asKnownError(thrown);
  if (error) {
    if (error !== thrown) {
      c.get("deps").logger.warn({ err: thrown, requestId: c.get("requestId") }, "database unavailable");
    }
    if (error.code === "unauthorized" && c.req.method === "GET") {
      const url = new URL(c.req.url);
      return c.redirect(loginUrl(`${url.pathname}${url.search}`), 303);
    }
    return errorPage(c, error);
  }
  if (thrown instanceof HTTPException && thrown.status < 500) {
    const code = thrown.status === 413 ? "payload_too_large" : "invalid_request";
    return errorPage(c, new AppError(code, thrown.message || "The request could not be read."));
  }
  c.get("deps").logger.error({ err: thrown, requestId: c.get("requestId") }, "unhandled error in web page");
  return errorPage(
    c,
    new AppError("internal", "An internal error occurred; quote the request id to support."),
  );
}
