import type { MiddlewareHandler } from "hono";
import type { WebEnv } from "./env.ts";

/**
 * Every page: only our own stylesheet and script run (no inline script, so injected markup
 * cannot execute), forms post only to us, no framing (clickjacking), no Referer to other sites
 * (invitation links carry their token), and nothing cached (pages show tenant data and
 * one-time secrets). `same-origin` rather than `no-referrer`: under `no-referrer` browsers send
 * `Origin: null` on form posts, and the CSRF check needs the real origin.
 */
const headers = {
  "content-security-policy":
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
} as const;

export const securityHeaders = (): MiddlewareHandler<WebEnv> => async (c, next) => {
  await next();
  for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
};
