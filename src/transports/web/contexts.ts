import type { Context, MiddlewareHandler } from "hono";
import { z } from "zod";
import { AppError } from "../../errors.ts";
import { getEnvironment } from "../../features/environments/get-environment.ts";
import { listEnvironments } from "../../features/environments/list-environments.ts";
import { locateRemediation } from "../../features/remediations/get-remediation.ts";
import { locateCallApproval } from "../../features/tasks/call-approvals.ts";
import { resolveWebActor } from "../../features/web-sessions/web-actor.ts";
import type { WebEnv } from "./env.ts";

const uuid = z.uuid();

/** Enough for any switcher; an organisation with more environments sees the first 200. */
const SWITCHER_LIMIT = 200;

/**
 * The signed-in user's actor inside an organisation, set as `ctx` for the verbs exactly as the
 * REST API sets it for a key, with the role read live from the membership. Not a member → the
 * same 404 another organisation's resource gets from the API, so the page does not confirm the
 * organisation exists.
 */
async function enterOrganization(c: Context<WebEnv>, organizationId: string, notFound: AppError) {
  const user = c.get("webUser");
  if (!user) throw new AppError("unauthorized", "Sign in first.");
  const deps = c.get("deps");
  const resolved = await resolveWebActor(deps.db, user, organizationId);
  if (!resolved) throw notFound;
  c.set("org", resolved.organization);
  c.set("ctx", { deps, actor: resolved.actor, channel: "web", requestId: c.get("requestId") });
}

/** The environment a page is about, plus the organisation's environments for the header's switcher. */
async function enterEnvironment(c: Context<WebEnv>, environmentId: string) {
  const ctx = c.get("ctx");
  const current = await getEnvironment({ ctx, input: { environmentId } });
  const { items } = await listEnvironments({ ctx, input: { pageSize: SWITCHER_LIMIT } });
  c.set("environment", { current, all: items });
}

/** `/orgs/:orgId/…`. */
export const orgContext = (): MiddlewareHandler<WebEnv> => async (c, next) => {
  const notFound = new AppError("not_found", "There is no such organisation among yours.");
  await enterOrganization(c, c.req.param("orgId") ?? "", notFound);
  await next();
};

/**
 * `/orgs/:orgId/environments/:environmentId/…`: looked up with the caller's organisation
 * (another organisation's id is 404, as on the API; a malformed one too, before it reaches the
 * database).
 */
export const environmentContext = (): MiddlewareHandler<WebEnv> => async (c, next) => {
  const environmentId = c.req.param("environmentId") ?? "";
  if (!uuid.safeParse(environmentId).success)
    throw new AppError("not_found", "There is no such environment.");
  await enterEnvironment(c, environmentId);
  await next();
};

/**
 * `/remediations/:remediationId/…`: the links patchbay hands out (thread, review, approval)
 * name no organisation, so the run's organisation is looked up from its id and then treated
 * exactly like `/orgs/:orgId/…`: an unknown id, a malformed one and another organisation's run
 * are the same 404. Sets `org`, `ctx` and `environment` (the run's), as elsewhere.
 */
export const remediationContext = (): MiddlewareHandler<WebEnv> => async (c, next) => {
  if (!c.get("webUser")) throw new AppError("unauthorized", "Sign in first.");
  const notFound = new AppError("not_found", "There is no such remediation among your organisations'.");
  const remediationId = c.req.param("remediationId") ?? "";
  const where = await locateRemediation({ db: c.get("deps").db, input: { remediationId } });
  if (!where) throw notFound;
  await enterOrganization(c, where.organizationId, notFound);
  await enterEnvironment(c, where.environmentId);
  await next();
};

/**
 * `/call-approvals/:callApprovalId/…`: the page a pending write call's `url` names, entered like
 * a run's links: the approval's organisation and environment, or the same 404 for an unknown,
 * malformed or foreign id. Sets `taskId` besides `org`, `ctx` and `environment`.
 */
export const callApprovalContext = (): MiddlewareHandler<WebEnv> => async (c, next) => {
  if (!c.get("webUser")) throw new AppError("unauthorized", "Sign in first.");
  const notFound = new AppError("not_found", "There is no such call approval among your organisations'.");
  const callApprovalId = c.req.param("callApprovalId") ?? "";
  const where = await locateCallApproval({ db: c.get("deps").db, input: { callApprovalId } });
  if (!where) throw notFound;
  await enterOrganization(c, where.organizationId, notFound);
  await enterEnvironment(c, where.environmentId);
  c.set("taskId", where.taskId);
  await next();
};
