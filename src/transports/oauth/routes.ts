import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { StatusCode } from "hono/utils/http-status";
import type Provider from "oidc-provider";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { loadOnce } from "../../platform/load-once.ts";
import { protectedResourceMetadata, resourceMetadataPath } from "../http/protected-resource.ts";
import { clientAddress } from "../web/client-address.ts";
import { verifyCsrf } from "../web/csrf.ts";
import type { WebEnv } from "../web/env.ts";
import { handleWebError } from "../web/error-page.ts";
import { securityHeaders } from "../web/security-headers.ts";
import { requireSignIn, webSession } from "../web/session.ts";
import { checkRegistration } from "./check-registration.ts";
import { completeDiscovery } from "./discovery.ts";
import { oauthRoutes, providerCookies } from "./endpoints.ts";
import { runNodeHandler } from "./node-bridge.ts";
import { registerConsentPages } from "./pages/consent.ts";
import { HONO_CONTEXT, oauthPages } from "./pages/provider-pages.ts";

/** oidc-provider refuses bodies over 56 KiB itself; this stops anything far larger earlier. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * The OAuth authorization server's HTTP surface: discovery (RFC 8414 / OIDC), RFC 9728 metadata
 * for `/api/v1`, every `/oauth/*` endpoint (oidc-provider through the Node bridge), and the pages
 * a person sees (consent is ours; the device pages are the provider's in the UI's layout).
 */
export function createOAuthRoutes(deps: Deps): Hono<WebEnv> {
  // oidc-provider (with Koa, jose and mime-db, ~1 MB of JavaScript) is loaded and configured on
  // the first request that needs it, not at every start.
  // A load that failed is tried again by the next request.
  const loadProvider = loadOnce(async (): Promise<Provider> => {
    const { createOAuthProvider } = await import("./provider.ts");
    const provider = createOAuthProvider(deps, oauthPages);
    provider.use(completeDiscovery(deps.config.baseUrl));
    return provider;
  });
  const forward = forwarder(deps, loadProvider);
  const oauth = new Hono<WebEnv>();
  oauth.onError(handleWebError);

  for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]) {
    oauth.on(["GET", "OPTIONS"], path, forward);
  }
  oauth.get(resourceMetadataPath("api"), (c) =>
    c.json(protectedResourceMetadata(deps.config.baseUrl, "api"), 200, {
      "cache-control": "public, max-age=3600",
      "access-control-allow-origin": "*",
    }),
  );

  // Pages a person sees: the UI's session, headers and CSRF checks.
  const formLimit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new AppError("payload_too_large", "That form was too large to accept.");
    },
  });
  oauth.use("/oauth/interaction/*", securityHeaders(), formLimit, webSession(), verifyCsrf());
  registerConsentPages(oauth, loadProvider);
  // Device codes cannot be tried by someone not signed in (`/oauth/device/*` matches `/oauth/device`).
  oauth.use(
    `${oauthRoutes.code_verification}/*`,
    securityHeaders(),
    formLimit,
    webSession(),
    requireSignIn(),
    verifyCsrf(),
  );

  oauth.all("/oauth/*", forward);
  return oauth;
}

/**
 * Hands a request to oidc-provider as if it came to the public base URL (its issuer): host and
 * scheme from the configuration, the client address from the socket or a trusted proxy's
 * X-Forwarded-For (web/client-address.ts) — never from headers the client wrote.
 */
function forwarder(deps: Deps, loadProvider: () => Promise<Provider>) {
  let callback: ReturnType<Provider["callback"]> | undefined;
  const base = new URL(deps.config.baseUrl);
  const mountPath = base.pathname.replace(/\/+$/, "");
  return async (c: Context<WebEnv>): Promise<Response> => {
    const url = new URL(c.req.url);
    // A verification link with the code in it (verification_uri_complete) shows the code form
    // filled in, not the provider's self-submitting page: the person still presses Continue,
    // and no inline script runs.
    if (c.req.method === "GET" && url.pathname === oauthRoutes.code_verification) url.search = "";
    const headers = new Headers(c.req.raw.headers);
    for (const name of [
      "forwarded",
      "x-forwarded-for",
      "x-forwarded-host",
      "x-forwarded-proto",
      "x-forwarded-port",
    ])
      headers.delete(name);
    headers.set("host", base.host);
    headers.set("x-forwarded-proto", base.protocol.slice(0, -1));
    const peer = clientAddress(c, deps.config.trustedProxies);
    if (peer !== "unknown") headers.set("x-forwarded-for", peer);
    // The provider's own session only carries one flow: each authorization or device sign-in
    // starts without it, so it can never speak for someone other than who is signed in now.
    if (
      c.req.method === "GET" &&
      (url.pathname === oauthRoutes.authorization || url.pathname === oauthRoutes.code_verification)
    ) {
      dropCookies(headers, [providerCookies.session, `${providerCookies.session}.sig`]);
    }
    let body = await readBody(c);
    if (body === "too_large") {
      return c.json({ error: "invalid_request", error_description: "The request body is too large." }, 413);
    }
    if (c.req.method === "POST" && url.pathname === oauthRoutes.registration) {
      const checked = checkRegistration(body);
      if ("refusal" in checked) {
        return c.json({ error: "invalid_client_metadata", error_description: checked.refusal }, 400);
      }
      body = checked.body;
    }
    callback ??= (await loadProvider()).callback();
    const answer = await runNodeHandler(callback, {
      method: c.req.method,
      url: `${url.pathname}${url.search}`,
      headers,
      body,
      mountPath,
      attachments: new Map([[HONO_CONTEXT, c]]),
    });
    return c.newResponse(answer.body, { status: answer.status as StatusCode, headers: answer.headers });
  };
}

async function readBody(c: Context<WebEnv>): Promise<Uint8Array | undefined | "too_large"> {
  if (c.req.method === "GET" || c.req.method === "HEAD" || c.req.method === "OPTIONS") return undefined;
  if (Number(c.req.header("content-length") ?? 0) > MAX_BODY_BYTES) return "too_large";
  const type = c.req.header("content-type") ?? "";
  let bytes: Uint8Array;
  // A form may already have been parsed (the CSRF check); encode it again as it came.
  if (/^application\/x-www-form-urlencoded\b/i.test(type)) {
    const params = new URLSearchParams();
    for (const [name, value] of await c.req.formData())
      if (typeof value === "string") params.append(name, value);
    bytes = new TextEncoder().encode(params.toString());
  } else bytes = new Uint8Array(await c.req.arrayBuffer());
  return bytes.byteLength > MAX_BODY_BYTES ? "too_large" : bytes;
}

function dropCookies(headers: Headers, names: readonly string[]): void {
  const cookie = headers.get("cookie");
  if (!cookie) return;
  const kept = cookie
    .split(";")
    .map((part) => part.trim())
    .filter((part) => part && !names.includes(part.slice(0, part.indexOf("=")).trim()));
  if (kept.length > 0) headers.set("cookie", kept.join("; "));
  else headers.delete("cookie");
}
