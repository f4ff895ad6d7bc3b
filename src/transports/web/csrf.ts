import type { Context, MiddlewareHandler } from "hono";
import { AppError } from "../../errors.ts";
import { csrfTokenFor, sameSecret } from "../../features/web-sessions/session-secret.ts";
import { randomToken } from "../../ids.ts";
import { parseFormBody } from "../http/form-body.ts";
import type { WebEnv } from "./env.ts";
import { readCookie, writeCookie } from "./session.ts";

/**
 * The token every form posts back in `_csrf`. Signed in: derived from the session secret (a
 * synchronizer token per session). Signed out (sign-in, invitation pages): a random value also
 * held in an HttpOnly cookie (double submit), so even the sign-in form cannot be posted from
 * another site to sign a victim in to the attacker's account.
 */
export function csrfToken(c: Context<WebEnv>): string {
  const secret = c.get("webSecret");
  if (secret) return csrfTokenFor(secret);
  const existing = c.get("preSessionToken") ?? readCookie(c, "preSession");
  if (existing && /^[0-9a-z]{40,64}$/.test(existing)) return existing;
  const minted = randomToken(32);
  c.set("preSessionToken", minted);
  writeCookie(c, "preSession", minted);
  return minted;
}

const refuse = (why: string) =>
  new AppError(
    "csrf_rejected",
    `This form could not be accepted (${why}). Reload the page and submit it again; if you opened it long ago, your session may have ended.`,
  );

/** Our own origin: the configured base URL's, and outside production also the one the request names. */
function allowedOrigins(c: Context<WebEnv>): string[] {
  const config = c.get("deps").config;
  const origins = [new URL(config.baseUrl).origin];
  // Development: http://localhost:8787 and http://127.0.0.1:8787 are the same server. In
  // production only the configured public origin counts (a proxy may rewrite Host and scheme).
  if (config.nodeEnv !== "production") origins.push(new URL(c.req.url).origin);
  return origins;
}

/**
 * Guards every state-changing web request, in two independent layers:
 * 1. Origin: browsers send it on every POST; it must be ours (or, when a browser omits it or
 *    sends `null`, Sec-Fetch-Site must say same-origin). Anything else is refused before the
 *    body is read.
 * 2. Token: the form's `_csrf` must equal `csrfToken(c)` (compared in constant time).
 * Only form encodings are accepted, so a cross-site `fetch` cannot slip JSON past either check.
 */
export const verifyCsrf = (): MiddlewareHandler<WebEnv> => async (c, next) => {
  if (c.req.method === "GET" || c.req.method === "HEAD") return next();
  const origin = c.req.header("origin");
  // Pages send `Referrer-Policy: no-referrer`, under which browsers send `Origin: null` even on
  // same-origin form posts (Fetch standard, "serializing a request origin"); then, as when no
  // Origin is sent, the browser's own Sec-Fetch-Site must say same-origin.
  if (origin !== undefined && origin !== "null") {
    if (!allowedOrigins(c).includes(origin)) throw refuse("it came from another site");
  } else if (c.req.header("sec-fetch-site") !== "same-origin") {
    throw refuse(origin === "null" ? "it came from another site" : "its origin is unknown");
  }
  const type = c.req.header("content-type") ?? "";
  if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(type)) {
    throw refuse("it is not a form submission");
  }
  const body = await parseFormBody(c);
  const sent = body._csrf;
  const expected = c.get("webSecret") ? csrfToken(c) : readCookie(c, "preSession");
  if (typeof sent !== "string" || !expected || !sameSecret(sent, expected)) {
    throw refuse("its security token is missing or out of date");
  }
  await next();
};
