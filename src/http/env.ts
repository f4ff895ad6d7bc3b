import type { ServiceContext } from "../context.ts";
import type { Deps } from "../deps.ts";

/** Hono variables set by the middleware chain; handlers read `ctx` only. */
export type AppEnv = {
  Variables: {
    deps: Deps;
    requestId: string;
    ctx: ServiceContext;
  };
};
