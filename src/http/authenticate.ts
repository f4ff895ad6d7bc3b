import type { MiddlewareHandler } from "hono";
import type { Actor } from "../context.ts";
import type { Deps } from "../deps.ts";
import { AppError } from "../errors.ts";
import { resolveApiKey } from "../features/api-keys/resolve-api-key.ts";
import type { AppEnv } from "./env.ts";

/**
 * Turns an `Authorization` header into an actor, or throws `unauthorized`. Shared by `/api/v1`
 * and `/mcp` so both doors accept exactly the same credentials.
 */
export async function resolveBearerActor(deps: Deps, header: string | undefined): Promise<Actor> {
  if (!header) throw new AppError("unauthorized", "Send Authorization: Bearer <API key or access token>.");
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) throw new AppError("unauthorized", "The Authorization header must be: Bearer <token>.");
  const actor = await resolveApiKey(deps, match[1]);
  if (!actor)
    throw new AppError("unauthorized", "The API key or access token is unknown, revoked or expired.");
  return actor;
}

/**
 * `/api/v1` accepts only `Authorization: Bearer`. A browser session cookie alone is refused
 * (spec 5.3): cookies ride along on cross-site requests, bearer tokens do not.
 */
export const authenticate = (): MiddlewareHandler<AppEnv> => async (c, next) => {
  const header = c.req.header("authorization");
  if (!header && c.req.header("cookie")) {
    throw new AppError(
      "unauthorized",
      "Browser session cookies are not accepted on /api/v1; send Authorization: Bearer <API key or access token>.",
    );
  }
  const deps = c.get("deps");
  const actor = await resolveBearerActor(deps, header);
  c.set("ctx", { deps, actor, requestId: c.get("requestId") });
  await next();
};
