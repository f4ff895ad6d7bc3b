import type { MiddlewareHandler } from "hono";
import { AppError } from "../errors.ts";
import { resolveApiKey } from "../features/api-keys/resolve-api-key.ts";
import type { AppEnv } from "./env.ts";

/**
 * `/api/v1` accepts only `Authorization: Bearer`. A browser session cookie alone is refused
 * (spec 5.3): cookies ride along on cross-site requests, bearer tokens do not.
 */
export const authenticate = (): MiddlewareHandler<AppEnv> => async (c, next) => {
  const header = c.req.header("authorization");
  if (!header) {
    const cookieOnly = Boolean(c.req.header("cookie"));
    throw new AppError(
      "unauthorized",
      cookieOnly
        ? "Browser session cookies are not accepted on /api/v1; send Authorization: Bearer <API key or access token>."
        : "Send Authorization: Bearer <API key or access token>.",
    );
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) throw new AppError("unauthorized", "The Authorization header must be: Bearer <token>.");
  const deps = c.get("deps");
  const actor = await resolveApiKey(deps, match[1]);
  if (!actor)
    throw new AppError("unauthorized", "The API key or access token is unknown, revoked or expired.");
  c.set("actor", actor);
  c.set("ctx", { deps, actor, requestId: c.get("requestId") });
  await next();
};
