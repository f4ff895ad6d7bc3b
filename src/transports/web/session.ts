import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { CookieOptions } from "hono/utils/cookie";
import { resolveWebSession, type WebUser } from "../../features/web-sessions/resolve-web-session.ts";
import type { StartedWebSession } from "../../features/web-sessions/start-web-session.ts";
import type { WebEnv } from "./env.ts";

export type { WebUser } from "../../features/web-sessions/resolve-web-session.ts";

/**
 * Over https the cookies take the `__Host-` prefix: the browser then insists on Secure, Path=/
 * and no Domain, so a sibling subdomain cannot plant or overwrite them. Plain http (local
 * development) cannot carry that prefix.
 */
const secureSite = (c: Context<WebEnv>): boolean => c.get("deps").config.baseUrl.startsWith("https:");

const names = {
  session: { secure: "__Host-patchbay_session", plain: "patchbay_session" },
  preSession: { secure: "__Host-patchbay_csrf", plain: "patchbay_csrf" },
} as const;

export type CookieKind = keyof typeof names;

const nameOf = (c: Context<WebEnv>, kind: CookieKind) => names[kind][secureSite(c) ? "secure" : "plain"];

/** HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site POSTs), Secure over https. */
const options = (c: Context<WebEnv>, maxAgeSeconds?: number): CookieOptions => ({
  path: "/",
  httpOnly: true,
  sameSite: "Lax",
  secure: secureSite(c),
  ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
});

export const readCookie = (c: Context<WebEnv>, kind: CookieKind): string | undefined =>
  getCookie(c, nameOf(c, kind));

export const writeCookie = (
  c: Context<WebEnv>,
  kind: CookieKind,
  value: string,
  maxAgeSeconds?: number,
): void => setCookie(c, nameOf(c, kind), value, options(c, maxAgeSeconds));

export const clearCookie = (c: Context<WebEnv>, kind: CookieKind): void => {
  deleteCookie(c, nameOf(c, kind), options(c));
};

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
