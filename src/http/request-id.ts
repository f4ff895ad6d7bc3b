import type { MiddlewareHandler } from "hono";
import { newId } from "../ids.ts";
import type { AppEnv } from "./env.ts";

const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

/** Honours a caller's X-Request-Id when it is a plain token (it ends up in logs), else mints one. */
export const requestId = (): MiddlewareHandler<AppEnv> => async (c, next) => {
  const inbound = c.req.header("x-request-id");
  const id = inbound && acceptable.test(inbound) ? inbound : newId("req");
  c.set("requestId", id);
  await next();
  c.res.headers.set("x-request-id", id);
};
