import type { Context, MiddlewareHandler } from "hono";
import { resolveWebSession, type WebUser } from "../../features/web-sessions/resolve-web-session.ts";
import type { StartedWebSession } from "../../features/web-sessions/start-web-session.ts";
import { clearCookie, readCookie, writeCookie } from "./cookies.ts";
import type { WebEnv } from "./env.ts";

export type { WebUser } from "../../features/web-sessions/resolve-web-session.ts";

/**
 * Resolves the session cookie on every web page: sets `webUser` (undefined when signed out) and
 * clears a cookie that no longer opens a session. Mount it before any page that needs to know
 * who is there — the UI's pages and, later, the OAuth login, consent and device pages.
 */
export const webSession = (): MiddlewareHandler<WebEnv> => async (c, next) => {
  const secret = readCookie(c, "session");
  const user = secret ? await resolveWebSession(c.get("deps"), secret) : null;
  c.set("webUser", user ?? undefined);
  c.set("webSecret", user ? secret : undefined);
  c.set("webSessionEnded", Boolean(secret) && !user);
  if (secret && !user) clearCookie(c, "session");
  await next();
};

/** The signed-in user of this request, or undefined. Needs `webSession()` upstream. */
export const currentWebUser = (c: Context<WebEnv>): WebUser | undefined => c.get("webUser");

/** Where to send someone who must sign in first; `next` is where they were going. */
export function loginUrl(next?: string, reason?: "expired" | "signed_out"): string {
  const params = new URLSearchParams();
  if (next && next !== "/") params.set("next", next);
  if (reason) params.set("reason", reason);
  const query = params.toString();
  return query ? `/login?${query}` : "/login";
}

/**
 * Pages behind sign-in: anyone without a valid session is sent to /login and brought back
 * after (GET only; a POST cannot be replayed after sign-in, so it lands on the home page).
 */
export const requireSignIn = (): MiddlewareHandler<WebEnv> => async (c, next) => {
  if (currentWebUser(c)) return next();
  const url = new URL(c.req.url);
  const back = c.req.method === "GET" ? `${url.pathname}${url.search}` : undefined;
  return c.redirect(loginUrl(back, c.get("webSessionEnded") ? "expired" : undefined), 303);
};

/** Hands a freshly started session to the browser; the cookie lives as long as the session may. */
export function setSessionCookie(c: Context<WebEnv>, session: StartedWebSession, now: Date): void {
  const maxAge = Math.max(0, Math.round((session.expiresAt.getTime() - now.getTime()) / 1000));
  writeCookie(c, "session", session.secret, maxAge);
}

export const clearSessionCookie = (c: Context<WebEnv>): void => clearCookie(c, "session");
