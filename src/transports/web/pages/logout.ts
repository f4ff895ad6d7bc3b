import type { Hono } from "hono";
import { signOut } from "../../../features/web-sessions/sign-out.ts";
import { verifyCsrf } from "../csrf.ts";
import type { WebEnv } from "../env.ts";
import { clearCookie, loginUrl } from "../session.ts";

/**
 * POST only, with the CSRF check: a link or an image cannot sign anyone out. A session that
 * already ended has nothing to revoke, so that case skips the check and just lands on /login.
 */
export function registerLogoutPage(web: Hono<WebEnv>): void {
  web.post(
    "/logout",
    async (c, next) => (c.get("webSecret") ? next() : c.redirect(loginUrl(undefined, "expired"), 303)),
    verifyCsrf(),
    async (c) => {
      const secret = c.get("webSecret");
      if (secret) await signOut({ deps: c.get("deps"), input: { secret } });
      clearCookie(c, "session");
      return c.redirect(loginUrl(undefined, "signed_out"), 303);
    },
  );
}
