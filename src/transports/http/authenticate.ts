import type { Context, MiddlewareHandler, Next } from "hono";
import type { MemberActor } from "../../actor.ts";
import type { Channel } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { AppError, isAppError } from "../../errors.ts";
import { cachedApiKey, resolveApiKey } from "../../features/api-keys/resolve-api-key.ts";
import { resolveAccessToken } from "../../features/oauth/resolve-access-token.ts";
import type { ResourceName } from "../../oauth-resources.ts";
import type { AppEnv } from "./env.ts";
import { problemResponse } from "./problem.ts";
import { bearerChallenge } from "./protected-resource.ts";

const bearer = /^Bearer\s+(\S+)\s*$/i;

/**
 * The door of an `/api/v1` request for the audit trail: the `patchbay` CLI announces itself in
 * its User-Agent (`patchbay-cli/<version>`). Self-declared, so it only labels the row; who acted
 * is the credential's (docs/decisions.md).
 */
const channelOf = (c: Context<AppEnv>): Channel =>
  c.req.header("user-agent")?.startsWith("patchbay-cli/") ? "cli" : "rest";

/**
 * Turns an `Authorization` header into an actor, or throws `unauthorized`. Shared by `/api/v1`
 * and `/mcp`: both take API keys (`sk_…`) and OAuth access tokens, each token only on the
 * resource it was issued for (`resource`).
 */
export async function resolveBearerActor(
  deps: Deps,
  header: string | undefined,
  resource: ResourceName,
): Promise<MemberActor> {
  if (!header) throw new AppError("unauthorized", "Send Authorization: Bearer <API key or access token>.");
  const match = bearer.exec(header);
  if (!match?.[1]) throw new AppError("unauthorized", "The Authorization header must be: Bearer <token>.");
  const credential = match[1];
  // Keys start with `sk_`; an opaque token may too (its alphabet has `_`), so a miss falls through.
  const actor =
    (credential.startsWith("sk_") ? await resolveApiKey(deps, credential) : null) ??
    (await resolveAccessToken(deps, credential, resource));
  if (!actor)
    throw new AppError("unauthorized", "The API key or access token is unknown, revoked or expired.");
  return actor;
}

/**
 * `/api/v1` accepts only `Authorization: Bearer`. A browser session cookie alone is refused
 * (spec 5.3): cookies ride along on cross-site requests, bearer tokens do not. A 401 carries an
 * RFC 6750 challenge pointing at the RFC 9728 metadata.
 */
export const authenticate = (): MiddlewareHandler<AppEnv> => (c, next) => {
  const deps = c.get("deps");
  const header = c.req.header("authorization");
  // A known API key (the common case) is answered from the auth cache, without a promise.
  const credential = header === undefined ? undefined : bearer.exec(header)?.[1];
  const actor = credential === undefined ? undefined : cachedApiKey(deps, credential);
  if (actor) {
    c.set("ctx", { deps, actor, channel: channelOf(c), requestId: c.get("requestId") });
    return next();
  }
  return authenticateSlowly(c, next, deps, header);
};

async function authenticateSlowly(
  c: Context<AppEnv>,
  next: Next,
  deps: Deps,
  header: string | undefined,
): Promise<Response | undefined> {
  if (!header && c.req.header("cookie")) {
    const error = new AppError(
      "unauthorized",
      "Browser session cookies are not accepted on /api/v1; send Authorization: Bearer <API key or access token>.",
    );
    return problemResponse(c, error, { "www-authenticate": bearerChallenge(deps.config.baseUrl, "api") });
  }
  let actor: MemberActor;
  try {
    actor = await resolveBearerActor(deps, header, "api");
  } catch (error) {
    if (!isAppError(error) || error.code !== "unauthorized") throw error;
    const challenge = bearerChallenge(
      deps.config.baseUrl,
      "api",
      header ? { error: "invalid_token" } : undefined,
    );
    return problemResponse(c, error, { "www-authenticate": challenge });
  }
  c.set("ctx", { deps, actor, channel: channelOf(c), requestId: c.get("requestId") });
  await next();
  return undefined;
}
