import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { AppError } from "../../errors.ts";
import { asKnownError } from "../../platform/db/errors.ts";
import { closesConnection } from "./connection-close.ts";
import type { AppEnv } from "./env.ts";
import { bearerChallenge } from "./protected-resource.ts";

/** RFC 9457 body. `code` is the stable machine key; `requestId` ties it to our logs. */
export type Problem = {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId: string;
  [extra: string]: unknown;
};

const titles: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  410: "Gone",
  412: "Precondition Failed",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  428: "Precondition Required",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

export function toProblem(error: AppError, requestId: string): Problem {
  return {
    ...error.details,
    type: `urn:patchbay:error:${error.code}`,
    title: titles[error.status] ?? "Error",
    status: error.status,
    detail: error.message,
    code: error.code,
    requestId,
  };
}

export function problemResponse(
  c: Context<AppEnv>,
  error: AppError,
  headers?: Record<string, string>,
): Response {
  const body = toProblem(error, c.get("requestId") ?? "unknown");
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { "content-type": "application/problem+json", ...headers },
  });
}

/**
 * The single place where thrown errors become HTTP. The database being away is a 503 the client
 * retries; any other unknown error is logged with the request id and answered as a bare 500 —
 * never its message, which may hold internals.
 */
export function handleError(thrown: Error, c: Context<AppEnv>): Response {
  const error = asKnownError(thrown);
  if (error) {
    if (error !== thrown) {
      c.get("deps")?.logger.warn({ err: thrown, requestId: c.get("requestId") }, "database unavailable");
    }
    const headers: Record<string, string> = {};
    if (error.code === "unauthorized") headers["www-authenticate"] = 'Bearer realm="patchbay"';
    // Every retryable refusal (429, 503) says when to come back, in the header clients read.
    const retryAfter = error.details?.retryAfterSeconds;
    if (typeof retryAfter === "number") headers["retry-after"] = String(retryAfter);
    // Answered before the body was read: close rather than read it to keep the connection.
    if (closesConnection(error.code, c.req.raw)) headers.connection = "close";
    const allow = error.details?.allow;
    if (error.code === "method_not_allowed" && Array.isArray(allow)) headers.allow = allow.join(", ");
    if (error.code === "insufficient_scope" && typeof error.details?.scope === "string") {
      const resource = new URL(c.req.url).pathname.startsWith("/mcp") ? "mcp" : "api";
      const baseUrl = c.get("deps")?.config.baseUrl ?? "";
      headers["www-authenticate"] = bearerChallenge(baseUrl, resource, {
        error: "insufficient_scope",
        scope: error.details.scope,
      });
    }
    return problemResponse(c, error, headers);
  }
  if (thrown instanceof HTTPException) {
    const status = thrown.status;
    const code = status === 413 ? "payload_too_large" : status === 401 ? "unauthorized" : "invalid_request";
    return problemResponse(c, new AppError(code, thrown.message || (titles[status] ?? "Error")));
  }
  c.get("deps")?.logger.error({ err: thrown, requestId: c.get("requestId") }, "unhandled error");
  return problemResponse(
    c,
    new AppError("internal", "An internal error occurred; quote the request id to support."),
  );
}
