import type { MiddlewareHandler } from "hono";
import { AppError } from "../../errors.ts";
import { resolveWebActor } from "../../features/web-sessions/web-actor.ts";
import type { WebEnv } from "./env.ts";

/**
 * `/orgs/:orgId/…`: the signed-in user's actor inside that organisation, set as `ctx` for the
 * verbs exactly as the REST API sets it for a key. Not a member → the same 404 another
 * organisation's resource gets from the API, so the page does not confirm the organisation exists.
 */
export const orgContext = (): MiddlewareHandler<WebEnv> => async (c, next) => {
  const user = c.get("webUser");
  const orgId = c.req.param("orgId");
  if (!user || !orgId) throw new AppError("unauthorized", "Sign in first.");
  const deps = c.get("deps");
  const resolved = await resolveWebActor(deps.db, user, orgId);
  if (!resolved) throw new AppError("not_found", "There is no such organisation among yours.");
  c.set("org", resolved.organization);
  c.set("ctx", { deps, actor: resolved.actor, requestId: c.get("requestId") });
  await next();
};
