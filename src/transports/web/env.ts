import type { Environment } from "../../features/environments/schemas.ts";
import type { WebUser } from "../../features/web-sessions/resolve-web-session.ts";
import type { WebOrganization } from "../../features/web-sessions/web-actor.ts";
import type { AppEnv } from "../http/env.ts";

/** The environment a page is about, and the organisation's others (for the switcher). */
export type EnvironmentState = { current: Environment; all: readonly Environment[] };

/**
 * Hono variables of the web UI's pages, on top of the app's. `webUser` is set by `webSession()`
 * on every page (undefined when signed out); `org` and `ctx` only under `/orgs/:orgId/…`.
 */
export type WebEnv = {
  Variables: AppEnv["Variables"] & {
    webUser: WebUser | undefined;
    /** The cookie secret of the valid session, for the CSRF token and sign-out. Never rendered. */
    webSecret: string | undefined;
    /** A cookie was presented but no longer opens a session (expired, revoked): say so on /login. */
    webSessionEnded: boolean;
    /** The pre-session CSRF token minted during this request (its cookie is being set). */
    preSessionToken: string | undefined;
    org: WebOrganization;
    /** Set under `/orgs/:orgId/environments/:environmentId/…`. */
    environment: EnvironmentState;
    /** Set under `/call-approvals/:callApprovalId/…`: the task the approval belongs to. */
    taskId: string;
  };
};
