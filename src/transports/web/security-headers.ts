import type { MiddlewareHandler } from "hono";
import type { WebEnv } from "./env.ts";

/**
 * The pages' Content-Security-Policy: only our own stylesheet and script run (no inline script,
 * so injected markup cannot execute), forms post only to `formAction` (default: us; `null` leaves
 * the directive out, for responses that hand the browser to an OAuth client), no framing.
 */
export function contentSecurityPolicy(options: { formAction?: readonly string[] | null } = {}): string {
  const formAction = options.formAction === undefined ? ["'self'"] : options.formAction;
  return [
    "default-src 'none'",
    "style-src 'self'",
    "script-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    ...(formAction ? [`form-action ${formAction.join(" ")}`] : []),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/**
 * Every page: the CSP above, no framing (clickjacking), no Referer (invitation links carry their
 * token), and nothing cached (pages show tenant data and one-time secrets).
 */
const headers = {
  "content-security-policy": contentSecurityPolicy(),
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
} as const;

export const securityHeaders = (): MiddlewareHandler<WebEnv> => async (c, next) => {
  await next();
  for (const [name, value] of Object.entries(headers)) {
    // A page that needs another policy (the OAuth consent page posts on to the client) sets its own.
    if (name === "content-security-policy" && c.res.headers.has(name)) continue;
    c.res.headers.set(name, value);
  }
};
