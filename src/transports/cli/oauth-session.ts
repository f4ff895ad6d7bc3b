import { CliError, exitCodes } from "./cli-error.ts";
import { OAuthError, requestToken, type ServerMetadata, type TokenResponse } from "./oauth-client.ts";
import { type OAuthSession, profileFlag, readProfiles, withProfilesLock, writeProfiles } from "./profiles.ts";

/** Refresh this long before the access token expires, so a request never leaves with a dying one. */
const EARLY_MS = 60_000;

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
    let tokens: TokenResponse;
    try {
      tokens = await requestToken(current, {
        grant_type: "refresh_token",
        refresh_token: current.refreshToken,
        client_id: current.clientId,
      });
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      if (error.error === "invalid_grant") {
        const { oauth: _ended, ...rest } = stored;
        writeProfiles(path, { profiles: { ...file.profiles, [profile]: rest } });
        throw loginRequired(profile, "the login has ended (expired, revoked, or your membership changed)");
      }
      throw new CliError("oauth_error", `refreshing the login failed: ${error.message}`, exitCodes.auth);
    }
    const next = {
      ...sessionFromTokens(current, current.clientId, tokens),
      refreshToken: tokens.refresh_token ?? current.refreshToken,
    };
    writeProfiles(path, { profiles: { ...file.profiles, [profile]: { ...stored, oauth: next } } });
    return next.accessToken;
  });
}
