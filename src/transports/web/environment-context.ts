import type { MiddlewareHandler } from "hono";
import { z } from "zod";
import { AppError } from "../../errors.ts";
import { getEnvironment } from "../../features/environments/get-environment.ts";
import { listEnvironments } from "../../features/environments/list-environments.ts";
import type { WebEnv } from "./env.ts";

const uuid = z.uuid();

/** Enough for any switcher; an organisation with more environments sees the first 200. */
const SWITCHER_LIMIT = 200;

/**
 * `/orgs/:orgId/environments/:environmentId/…`: the environment, looked up with the caller's
 * organisation (another organisation's id is 404, as on the API; a malformed one too, before it
 * reaches the database), plus the organisation's environments for the header's switcher.
 */
export const environmentContext = (): MiddlewareHandler<WebEnv> => async (c, next) => {
  const environmentId = c.req.param("environmentId") ?? "";
  if (!uuid.safeParse(environmentId).success)
    throw new AppError("not_found", "There is no such environment.");
  const ctx = c.get("ctx");
  const current = await getEnvironment({ ctx, input: { environmentId } });
  const { items } = await listEnvironments({ ctx, input: { pageSize: SWITCHER_LIMIT } });
  c.set("environment", { current, all: items });
  await next();
};
