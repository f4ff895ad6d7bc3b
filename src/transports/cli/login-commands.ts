import { spawn } from "node:child_process";
import type { Command } from "commander";
import type { Me } from "../../features/me/schemas.ts";
import { CLI_CLIENT_ID, cliScopes, DEVICE_CODE_GRANT } from "../../features/oauth/cli-client.ts";
import { ApiError, createApiClient } from "./api-client.ts";
import { problemToCliError } from "./api-errors.ts";
import { CliError, exitCodes } from "./cli-error.ts";
import { json } from "./format.ts";
import {
  type DeviceAuthorization,
  discoverServer,
  OAuthError,
  requestToken,
  revokeToken,
  type ServerMetadata,
  startDeviceAuthorization,
  type TokenResponse,
} from "./oauth-client.ts";
import { sessionFromTokens } from "./oauth-session.ts";
import {
  DEFAULT_PROFILE,
  profileFlag,
  profileName,
  profilesPath,
  readProfiles,
  toStderr,
  withProfilesLock,
  writeProfiles,
} from "./profiles.ts";
import { baseUrlFor, baseUrlHelp } from "./settings.ts";
import { styleFor } from "./style.ts";

type LoginFlags = { baseUrl?: string; profile?: string; browser?: boolean; json?: boolean };
type LogoutFlags = { profile?: string; forget?: boolean };

/** `patchbay login` (OAuth device authorization, RFC 8628) and `patchbay logout`. */
export function registerLoginCommands(program: Command): void {
  program
    .command("login")
    .description("Sign in through the browser (device login) and keep the session in a profile")
    .option("--base-url <url>", baseUrlHelp)
    .option(
      "--profile <name>",
      `profile to keep the login in (default: "${DEFAULT_PROFILE}"; created if new)`,
    )
    .option("--no-browser", "do not try to open a browser; only print the link")
    .option("--json", "print who is now logged in as JSON")
    .action(login);

  program
    .command("logout")
    .description("Revoke the profile's login at the server and remove it from the profile")
    .option("--profile <name>", `profile to log out (default: "${DEFAULT_PROFILE}")`)
    .option("--forget", "remove the login even when the server cannot be reached to revoke it")
    .action(logout);
}

async function login(flags: LoginFlags): Promise<void> {
  const name = profileName(flags.profile);
  const path = profilesPath();
  const baseUrl = baseUrlFor(flags.baseUrl, readProfiles(path).profiles[name]);
  const server = await discoverServer(baseUrl);
  const device = await startDeviceAuthorization(server, {
    client_id: CLI_CLIENT_ID,
    scope: cliScopes.join(" "),
    resource: `${baseUrl}/api/v1`,
  }).catch((error: unknown) => {
    throw error instanceof OAuthError
      ? new CliError("oauth_error", `the server refused to start a login: ${error.message}`, exitCodes.other)
      : error;
  });

  const style = styleFor(process.stderr);
  const link = device.verification_uri_complete ?? device.verification_uri;
  toStderr(
    [
      "To log in, open this page in a browser where you are (or can get) signed in to patchbay:",
      "",
      `  ${style.bold(link)}`,
      "",
      `and check that it shows the code ${style.bold(device.user_code)}.`,
      `Waiting for approval (the code expires in ${Math.round(device.expires_in / 60)} minutes; Ctrl-C to stop)…`,
    ].join("\n"),
  );
  if (flags.browser !== false) openBrowser(link);

  const session = sessionFromTokens(server, CLI_CLIENT_ID, await waitForApproval(server, device));
  const me = (await createApiClient({ baseUrl, profile: name, credential: { kind: "oauth", session, path } })(
    {
      method: "GET",
      path: "/me",
    },
  ).catch((error: unknown) => {
    throw error instanceof ApiError ? problemToCliError(error.problem, {}) : error;
  })) as Me;
  await withProfilesLock(path, async () => {
    const file = readProfiles(path);
    const { apiKey, ...kept } = file.profiles[name] ?? {};
    if (apiKey) toStderr(`note: the API key stored in profile ${name} was removed; the login replaces it`);
    writeProfiles(path, { profiles: { ...file.profiles, [name]: { ...kept, baseUrl, oauth: session } } });
  });
  process.stdout.write(
    flags.json
      ? json({ profile: name, baseUrl, ...me })
      : `Logged in to ${baseUrl} as ${me.user.email}, in ${me.organization.name} (${me.organization.id}) as ${me.role}.\n` +
          `Profile ${name} saved in ${path}.\n`,
  );
}

/** Polls the token endpoint at the server's pace (RFC 8628 §3.4–3.5) until approved, refused or expired. */
async function waitForApproval(server: ServerMetadata, device: DeviceAuthorization): Promise<TokenResponse> {
  const expired = () =>
    new CliError(
      "expired_token",
      "the code expired before it was approved",
      exitCodes.auth,
      "patchbay login",
    );
  let interval = Math.max(1, device.interval ?? 5) * 1000;
  const deadline = Date.now() + device.expires_in * 1000;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, interval));
    try {
      return await requestToken(server, {
        grant_type: DEVICE_CODE_GRANT,
        device_code: device.device_code,
        client_id: CLI_CLIENT_ID,
      });
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      if (error.error === "slow_down") interval += 5_000;
      else if (error.error === "expired_token") throw expired();
      else if (error.error === "access_denied") {
        throw new CliError("access_denied", "the login was refused in the browser", exitCodes.auth);
      } else if (error.error !== "authorization_pending") {
        throw new CliError("oauth_error", `the login failed: ${error.message}`, exitCodes.auth);
      }
    }
    if (Date.now() > deadline) throw expired();
  }
}

async function logout(flags: LogoutFlags): Promise<void> {
  const name = profileName(flags.profile);
  const path = profilesPath();
  const session = readProfiles(path).profiles[name]?.oauth;
  if (!session) return void process.stdout.write(`Profile ${name} is not logged in.\n`);
  let revoked = false;
  if (session.revocationEndpoint) {
    try {
      // Revoking the refresh token ends the whole login at the server: its access tokens too.
      await revokeToken(
        { issuer: session.issuer, revocationEndpoint: session.revocationEndpoint },
        {
          token: session.refreshToken ?? session.accessToken,
          token_type_hint: session.refreshToken ? "refresh_token" : "access_token",
          client_id: session.clientId,
        },
      );
      revoked = true;
    } catch (error) {
      if (!flags.forget) {
        const why = error instanceof Error ? error.message : String(error);
        throw new CliError(
          "revoke_failed",
          `could not revoke the login at ${session.issuer}: ${why}`,
          exitCodes.other,
          `retry, or remove it here only: patchbay logout${profileFlag(name)} --forget`,
        );
      }
      toStderr(`warning: the login could not be revoked at ${session.issuer}; it is only removed here`);
    }
  }
  await withProfilesLock(path, async () => {
    const file = readProfiles(path);
    const { oauth, ...rest } = file.profiles[name] ?? {};
    if (oauth) writeProfiles(path, { profiles: { ...file.profiles, [name]: rest } });
  });
  process.stdout.write(
    revoked
      ? `Logged out of ${session.issuer}: the login is revoked and removed from profile ${name}.\n`
      : `Removed the login from profile ${name}.\n`,
  );
}

/**
 * Opens the link in the desktop's browser when there is one to open (a terminal, a display);
 * otherwise the printed link is enough. Failing to open is silent: the link is on screen.
 */
function openBrowser(url: string): void {
  if (!process.stderr.isTTY || process.env.CI) return;
  const [bin, ...args] =
    process.platform === "darwin"
      ? ["open", url]
      : process.platform === "win32"
        ? ["cmd", "/c", "start", "", url]
        : process.env.DISPLAY || process.env.WAYLAND_DISPLAY
          ? ["xdg-open", url]
          : [];
  if (!bin) return;
  try {
    const child = spawn(bin, args, { detached: true, stdio: "ignore" });
    child.on("error", () => {});
    child.unref();
  } catch {
    // the link is printed
  }
}
