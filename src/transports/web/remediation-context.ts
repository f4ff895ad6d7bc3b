import type { MiddlewareHandler } from "hono";
import { AppError } from "../../errors.ts";
import { getEnvironment } from "../../features/environments/get-environment.ts";
import { listEnvironments } from "../../features/environments/list-environments.ts";
import { locateRemediation } from "../../features/remediations/get-remediation.ts";
import { resolveWebActor } from "../../features/web-sessions/web-actor.ts";
import type { WebEnv } from "./env.ts";

/** Enough for the header's switcher, as on `/orgs/…/environments/…` pages. */
const SWITCHER_LIMIT = 200;

/**
 * `/remediations/:remediationId/…`: the links patchbay hands out (thread, review, approval)
 * name no organisation, so the run's organisation is looked up from its id and then treated
 * exactly like `/orgs/:orgId/…` (org-context.ts): the actor from the person's live membership,
 * and an unknown id, a malformed one and another organisation's run are the same 404. Sets
 * `org`, `ctx` and `environment` (the run's), so the verbs and the header work as elsewhere.
 */
export const remediationContext = (): MiddlewareHandler<WebEnv> => async (c, next) => {
  const user = c.get("webUser");
  if (!user) throw new AppError("unauthorized", "Sign in first.");
  const deps = c.get("deps");
  const remediationId = c.req.param("remediationId") ?? "";
  const notFound = new AppError("not_found", "There is no such remediation among your organisations'.");
  const where = await locateRemediation({ db: deps.db, input: { remediationId } });
  if (!where) throw notFound;
  const resolved = await resolveWebActor(deps.db, user, where.organizationId);
  if (!resolved) throw notFound;
  const ctx = { deps, actor: resolved.actor, requestId: c.get("requestId") };
  c.set("org", resolved.organization);
  c.set("ctx", ctx);
  const current = await getEnvironment({ ctx, input: { environmentId: where.environmentId } });
  const { items } = await listEnvironments({ ctx, input: { pageSize: SWITCHER_LIMIT } });
  c.set("environment", { current, all: items });
  await next();
};
