import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { CookieOptions } from "hono/utils/cookie";
import type { WebEnv } from "./env.ts";

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
