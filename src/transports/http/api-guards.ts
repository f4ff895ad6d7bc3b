import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { AppError } from "../../errors.ts";
import type { AppEnv } from "./env.ts";

/** REST bodies are small JSON documents; anything larger is a mistake or an attack. */
export const MAX_API_BODY_BYTES = 1024 * 1024;

export const apiBodyLimit = (): MiddlewareHandler<AppEnv> => {
  const limit = bodyLimit({
    maxSize: MAX_API_BODY_BYTES,
    onError: () => {
      throw new AppError("payload_too_large", `Request bodies are limited to ${MAX_API_BODY_BYTES} bytes.`, {
        limit: MAX_API_BODY_BYTES,
      });
    },
  });
  // GET and HEAD carry no body; skipping the limiter spares them building a wrapped request.
  return (c, next) => (c.req.method === "GET" || c.req.method === "HEAD" ? next() : limit(c, next));
};

const jsonType = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** A body that is not JSON is refused up front (415) rather than half-parsed. */
export const requireJsonBodies = (): MiddlewareHandler<AppEnv> => (c, next) => {
  const method = c.req.method;
  if (method === "POST" || method === "PUT" || method === "PATCH") {
    const type = c.req.header("content-type");
    const length = c.req.header("content-length");
    // A request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112 §6.3):
    // `curl -X POST` on an operation that takes none. Node still hands it over as a stream.
    const framed = length !== undefined || c.req.header("transfer-encoding") !== undefined;
    const declaredEmpty = length === "0" || (!framed && type === undefined);
    const hasBody = c.req.raw.body !== null && !declaredEmpty;
    if (hasBody && (!type || !jsonType.test(type))) {
      throw new AppError("unsupported_media_type", "Send request bodies as application/json.", {
        contentType: type ?? null,
      });
    }
  }
  return next();
};
