// OAuth test support: a person signed in to the web UI (in process, `app.request`) approving
// device codes and authorization requests the way a browser would, and token requests.
import { createHash, randomBytes } from "node:crypto";
import type { Deps } from "../../src/deps.ts";
import { CLI_CLIENT_ID, DEVICE_CODE_GRANT } from "../../src/features/oauth/cli-client.ts";
import { signedInBrowser, type WebClient } from "../web.ts";

type AppLike = { request(input: string, init?: RequestInit): Response | Promise<Response> };

export type Tokens = {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  scope?: string;
  token_type: string;
};

export const formPost = (fields: Record<string, string | string[]>): RequestInit => {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
  return {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: body.toString(),
  };
};

const path = (deps: Deps, url: string) =>
  url.startsWith(deps.config.baseUrl) ? url.slice(deps.config.baseUrl.length) : url;

/** Follows redirects on our own origin; returns the last response (a page, or a redirect elsewhere). */
export async function follow(deps: Deps, browser: WebClient, first: Response): Promise<Response> {
  let res = first;
  for (let hops = 0; hops < 10; hops++) {
    const location = res.headers.get("location");
    if (!location || (location.includes("://") && !location.startsWith(deps.config.baseUrl))) return res;
    res = await browser.get(path(deps, location));
  }
  throw new Error("too many redirects");
}

/** The consent page's form action, after checking it is one. */
export function consentAction(page: string): string {
  const action = /action="(\/oauth\/interaction\/[^"]+)"/.exec(page)?.[1];
  if (!action) throw new Error(`not a consent page:\n${page.slice(0, 2000)}`);
  return action;
}

/** Starts a device authorization as the CLI would. */
export async function startDevice(
  app: AppLike,
  deps: Deps,
  options: { scope: string; resource?: string; clientId?: string },
): Promise<{ device_code: string; user_code: string; verification_uri_complete: string; interval?: number }> {
  const res = await app.request(
    `${deps.config.baseUrl}/oauth/device_authorization`,
    formPost({
      client_id: options.clientId ?? CLI_CLIENT_ID,
      scope: options.scope,
      ...(options.resource ? { resource: options.resource } : {}),
    }),
  );
  if (res.status !== 200) throw new Error(`device authorization: ${res.status} ${await res.text()}`);
  return (await res.json()) as { device_code: string; user_code: string; verification_uri_complete: string };
}

/**
 * A signed-in person enters the code, confirms the device and answers the consent page
 * (`decision` allow or deny, for `organizationId`). Returns the final page.
 */
export async function approveDevice(
  deps: Deps,
  browser: WebClient,
  userCode: string,
  answer: { organizationId: string; decision?: "allow" | "deny" },
): Promise<Response> {
  const entry = await browser.page(`/oauth/device?user_code=${encodeURIComponent(userCode)}`);
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(entry)?.[1] ?? "";
  const confirmPage = await browser.post("/oauth/device", { xsrf, user_code: userCode });
  const confirmXsrf = /name="xsrf" value="([^"]+)"/.exec(await confirmPage.text())?.[1] ?? "";
  const confirmed = await browser.post("/oauth/device", {
    xsrf: confirmXsrf,
    user_code: userCode,
    confirm: "yes",
  });
  const consent = await follow(deps, browser, confirmed);
  const action = consentAction(await consent.text());
  const answered = await browser.post(action, {
    decision: answer.decision ?? "allow",
    organization: answer.organizationId,
  });
  return follow(deps, browser, answered);
}

/** Polls the token endpoint once for a device code. */
export async function pollDevice(app: AppLike, deps: Deps, deviceCode: string, clientId = CLI_CLIENT_ID) {
  return app.request(
    `${deps.config.baseUrl}/oauth/token`,
    formPost({ client_id: clientId, grant_type: DEVICE_CODE_GRANT, device_code: deviceCode }),
  );
}

/** Device flow end to end for a tenant's owner: the tokens the CLI would receive. */
export async function deviceTokens(
  app: AppLike,
  deps: Deps,
  who: { userId: string; organizationId: string },
  options: { scope: string; resource?: string },
): Promise<Tokens> {
  const started = await startDevice(app, deps, options);
  const browser = await signedInBrowser(app, deps, who.userId);
  const done = await approveDevice(deps, browser, started.user_code, { organizationId: who.organizationId });
  if (done.status !== 200) throw new Error(`device approval ended with ${done.status}`);
  const res = await pollDevice(app, deps, started.device_code);
  if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
  return (await res.json()) as Tokens;
}

/** PKCE (RFC 7636, S256). */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** Registers a public client for the authorization code flow (RFC 7591). */
export async function registerClient(
  app: AppLike,
  deps: Deps,
  metadata: Record<string, unknown> = {},
): Promise<{ client_id: string; redirect_uris: string[] }> {
  const res = await app.request(`${deps.config.baseUrl}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "Test MCP client",
      redirect_uris: ["http://127.0.0.1:33418/callback"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...metadata,
    }),
  });
  if (res.status !== 201) throw new Error(`registration: ${res.status} ${await res.text()}`);
  return (await res.json()) as { client_id: string; redirect_uris: string[] };
}

/**
 * The authorization code flow through the browser stand-in: the authorization URL, sign-in
 * already done, consent answered. Returns the redirect to the client (its Location).
 */
export async function authorizeInBrowser(
  deps: Deps,
  browser: WebClient,
  authorizationUrl: string,
  answer: { organizationId: string; decision?: "allow" | "deny" },
): Promise<URL> {
  const first = await browser.get(path(deps, authorizationUrl));
  const consent = await follow(deps, browser, first);
  if (!consent.headers.get("location")) {
    const answered = await browser.post(consentAction(await consent.text()), {
      decision: answer.decision ?? "allow",
      organization: answer.organizationId,
    });
    const done = await follow(deps, browser, answered);
    const location = done.headers.get("location");
    if (!location) throw new Error(`no redirect to the client: ${done.status} ${await done.text()}`);
    return new URL(location);
  }
  return new URL(consent.headers.get("location") ?? "");
}
