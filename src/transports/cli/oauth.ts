import { version } from "../../version.ts";
import { CliError, exitCodes, networkError } from "./cli-error.ts";
import { isRecord, parseJson, strings } from "./format.ts";
import { type OAuthSession, profileFlag, readProfiles, withProfilesLock, writeProfiles } from "./profiles.ts";

/** What the CLI needs from the authorization server metadata (RFC 8414). */
export type ServerMetadata = {
  issuer: string;
  tokenEndpoint: string;
  deviceAuthorizationEndpoint: string;
  revocationEndpoint?: string;
};

/** The token endpoint's answer (RFC 6749 §5.1). */
export type TokenResponse = {
  access_token: string;
  expires_in?: number;
  refresh_token?: string;
  scope?: string;
};

export type DeviceAuthorization = {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  interval?: number;
};

/** An OAuth error answer (`{ error, error_description }`) from the authorization server. */
export class OAuthError extends Error {
  readonly error: string;
  constructor(error: string, description?: string) {
    super(description ? `${error}: ${description}` : error);
    this.name = "OAuthError";
    this.error = error;
  }
}

const TIMEOUT_MS = 30_000;
/** Refresh this long before the access token expires, so a request never leaves with a dying one. */
const EARLY_MS = 60_000;

type Form = Record<string, string | undefined>;

async function call(url: string, baseUrl: string, form?: Form) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(form ?? {})) if (v !== undefined) params.set(k, v);
  const res = await fetch(url, {
    ...(form ? { method: "POST", body: params.toString() } : {}),
    // Never follow: a redirect would carry the device code or a token somewhere else.
    redirect: "manual",
    signal: AbortSignal.timeout(TIMEOUT_MS),
    headers: {
      accept: "application/json",
      "user-agent": `patchbay-cli/${version}`,
      ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
    },
  }).catch((error: unknown) => {
    throw networkError(baseUrl, error, "check that the server is running and --base-url points at it");
  });
  const body = parseJson(await res.text());
  return { status: res.status, body: isRecord(body) ? body : {} };
}

/** POSTs the form to an OAuth endpoint: the body of a 200 with the `required` strings, else an `OAuthError`. */
export async function post(url: string, issuer: string, form: Form, required: string[]): Promise<unknown> {
  const { status, body } = await call(url, issuer, form);
  if (status === 200 && required.every((key) => typeof body[key] === "string")) return body;
  if (typeof body.error !== "string") throw new OAuthError(`http_${status}`);
  const description = body.error_description;
  throw new OAuthError(body.error, typeof description === "string" ? description : undefined);
}

/**
 * Reads `<base>/.well-known/oauth-authorization-server`. Its `issuer` must be the base URL
 * itself (RFC 8414 §3.3): a document naming another issuer is refused, so a proxy or a
 * look-alike cannot send the login elsewhere.
 */
export async function discoverServer(baseUrl: string): Promise<ServerMetadata> {
  const { status, body } = await call(`${baseUrl}/.well-known/oauth-authorization-server`, baseUrl);
  const { issuer, token_endpoint, device_authorization_endpoint, revocation_endpoint } = strings(body, [
    "issuer",
    "token_endpoint",
    "device_authorization_endpoint",
    "revocation_endpoint",
  ]);
  if (status !== 200 || !issuer || !token_endpoint || !device_authorization_endpoint) {
    throw new CliError(
      "no_oauth",
      `${baseUrl} does not offer device login (no authorization server metadata, HTTP ${status})`,
      exitCodes.other,
      "check --base-url, or use an API key (PATCHBAY_API_KEY)",
    );
  }
  if (issuer !== baseUrl) {
    throw new CliError(
      "issuer_mismatch",
      `the server at ${baseUrl} says its issuer is ${issuer}`,
      exitCodes.other,
      `log in with --base-url ${issuer}`,
    );
  }
  return {
    issuer,
    tokenEndpoint: token_endpoint,
    deviceAuthorizationEndpoint: device_authorization_endpoint,
    ...(revocation_endpoint ? { revocationEndpoint: revocation_endpoint } : {}),
  };
}

/** One token request (device code or refresh grant); OAuth errors come back as `OAuthError`. */
export const requestToken = (server: Pick<ServerMetadata, "issuer" | "tokenEndpoint">, form: Form) =>
  post(server.tokenEndpoint, server.issuer, form, ["access_token"]) as Promise<TokenResponse>;

export function sessionFromTokens(
  server: Pick<ServerMetadata, "issuer" | "tokenEndpoint" | "revocationEndpoint">,
  clientId: string,
  tokens: TokenResponse,
): OAuthSession {
  return {
    issuer: server.issuer,
    clientId,
    tokenEndpoint: server.tokenEndpoint,
    ...(server.revocationEndpoint ? { revocationEndpoint: server.revocationEndpoint } : {}),
    accessToken: tokens.access_token,
    ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
    expiresAt: Date.now() + (tokens.expires_in ?? 3600) * 1000,
    scope: tokens.scope ?? "",
  };
}

const loginRequired = (profile: string, why: string): CliError =>
  new CliError("login_required", why, exitCodes.auth, `log in again: patchbay login${profileFlag(profile)}`);

/**
 * An access token of the profile's login that is good for a while: the stored one, or — when it
 * is about to expire, or `force` (the API refused it) — a fresh one from the refresh token. The
 * refresh happens under the profiles lock and re-reads the file first, so concurrent commands
 * refresh once and share the result. A refresh the server refuses (revoked, expired, member
 * removed) forgets the login.
 */
export async function accessTokenFor(
  path: string,
  profile: string,
  seen: OAuthSession,
  options: { force?: boolean } = {},
): Promise<string> {
  if (!options.force && seen.expiresAt - EARLY_MS > Date.now()) return seen.accessToken;
  return withProfilesLock(path, async () => {
    const file = readProfiles(path);
    const stored = file.profiles[profile];
    const current = stored?.oauth;
    if (!stored || !current) throw loginRequired(profile, `profile ${profile} is not logged in any more`);
    if (current.accessToken !== seen.accessToken && current.expiresAt - EARLY_MS > Date.now()) {
      return current.accessToken; // another process refreshed while this one waited
    }
    if (!current.refreshToken) throw loginRequired(profile, "the login has expired");
    const tokens = await requestToken(current, {
      grant_type: "refresh_token",
      refresh_token: current.refreshToken,
      client_id: current.clientId,
    }).catch((error: unknown) => {
      if (!(error instanceof OAuthError)) throw error;
      if (error.error === "invalid_grant") {
        const { oauth: _ended, ...rest } = stored;
        writeProfiles(path, { profiles: { ...file.profiles, [profile]: rest } });
        throw loginRequired(profile, "the login has ended (expired, revoked, or your membership changed)");
      }
      throw new CliError("oauth_error", `refreshing the login failed: ${error.message}`, exitCodes.auth);
    });
    const next = {
      ...sessionFromTokens(current, current.clientId, tokens),
      refreshToken: tokens.refresh_token ?? current.refreshToken,
    };
    writeProfiles(path, { profiles: { ...file.profiles, [profile]: { ...stored, oauth: next } } });
    return next.accessToken;
  });
}
