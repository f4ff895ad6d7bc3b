import { spawn } from "node:child_process";
import type { Command } from "commander";
import type { Me } from "../../features/me/schemas.ts";
import { CLI_CLIENT_ID, cliScopes, DEVICE_CODE_GRANT } from "../../features/oauth/cli-client.ts";
import { ApiError, createApiClient } from "./api-client.ts";
import { problemToCliError } from "./api-errors.ts";
import { CliError, exitCodes } from "./cli-error.ts";
import { json } from "./format.ts";
import {
  discoverServer,
  OAuthError,
  requestToken,
  revokeToken,
  type ServerMetadata,
  startDeviceAuthorization,
  type TokenResponse,
} from "./oauth-client.ts";
import { sessionFromTokens } from "./oauth-session.ts";
import { withProfilesLock } from "./profile-lock.ts";
import { assertProfileName, DEFAULT_PROFILE, profilesPath, readProfiles, writeProfiles } from "./profiles.ts";
import { DEFAULT_BASE_URL, normalizeBaseUrl } from "./settings.ts";
import { styleFor } from "./style.ts";

const warn = (line: string) => process.stderr.write(`${line}\n`);
const info = (line: string) => process.stderr.write(`${line}\n`);

type LoginFlags = { baseUrl?: string; profile?: string; browser?: boolean; json?: boolean };
type LogoutFlags = { profile?: string; forget?: boolean };

/** `patchbay login` (OAuth device authorization, RFC 8628) and `patchbay logout`. */
export function registerLoginCommands(program: Command): void {
  program
    .command("login")
    .description("Sign in through the browser (device login) and keep the session in a profile")
    .option(
      "--base-url <url>",
      `patchbay's base URL (default: the profile's, else PATCHBAY_BASE_URL, else ${DEFAULT_BASE_URL})`,
    )
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
  const name = flags.profile ?? DEFAULT_PROFILE;
  assertProfileName(name);
  const path = profilesPath();
  const existing = readProfiles(path, warn).profiles[name];
  const baseUrl = normalizeBaseUrl(
    flags.baseUrl ?? existing?.baseUrl ?? nonEmpty(process.env.PATCHBAY_BASE_URL) ?? DEFAULT_BASE_URL,
  );
  const server = await discoverServer(baseUrl);
  const device = await startDeviceAuthorization(server, {
    clientId: CLI_CLIENT_ID,
    scope: cliScopes.join(" "),
    resource: `${baseUrl}/api/v1`,
  }).catch((error: unknown) => {
    throw error instanceof OAuthError
      ? new CliError("oauth_error", `the server refused to start a login: ${error.message}`, exitCodes.other)
      : error;
  });

  const style = styleFor(process.stderr);
  const link = device.verification_uri_complete ?? device.verification_uri;
  info(
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

  const tokens = await waitForApproval(server, device);
  const session = sessionFromTokens(server, CLI_CLIENT_ID, tokens);
  let me: Me;
  try {
    me = (
      await createApiClient({ baseUrl, profile: name, credential: { kind: "oauth", session, path } }).request(
        {
          method: "GET",
          path: "/me",
        },
      )
    ).body as Me;
  } catch (error) {
    if (error instanceof ApiError) throw problemToCliError(error.problem, {});
    throw error;
  }
  await withProfilesLock(path, async () => {
    const file = readProfiles(path, warn);
    const { apiKey, ...kept } = file.profiles[name] ?? {};
    if (apiKey) warn(`note: the API key stored in profile ${name} was removed; the login replaces it`);
    writeProfiles(path, { profiles: { ...file.profiles, [name]: { ...kept, baseUrl, oauth: session } } });
  });
  if (flags.json) {
    process.stdout.write(json({ profile: name, baseUrl, ...me }));
    return;
  }
  process.stdout.write(
    `Logged in to ${baseUrl} as ${me.user.email}, in ${me.organization.name} (${me.organization.id}) as ${me.role}.\n` +
      `Profile ${name} saved in ${path}.\n`,
  );
}

/** Polls the token endpoint at the server's pace (RFC 8628 §3.4–3.5) until approved, refused or expired. */
async function waitForApproval(
  server: ServerMetadata,
  device: { device_code: string; expires_in: number; interval?: number },
): Promise<TokenResponse> {
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
      switch (error.error) {
        case "authorization_pending":
          break;
        case "slow_down":
          interval += 5_000;
          break;
        case "access_denied":
          throw new CliError("access_denied", "the login was refused in the browser", exitCodes.auth);
        case "expired_token":
          throw new CliError(
            "expired_token",
            "the code expired before it was approved",
            exitCodes.auth,
            "patchbay login",
          );
        default:
          throw new CliError("oauth_error", `the login failed: ${error.message}`, exitCodes.auth);
      }
    }
    if (Date.now() > deadline) {
      throw new CliError(
        "expired_token",
        "the code expired before it was approved",
        exitCodes.auth,
        "patchbay login",
      );
    }
  }
}

async function logout(flags: LogoutFlags): Promise<void> {
  const name = flags.profile ?? DEFAULT_PROFILE;
  assertProfileName(name);
  const path = profilesPath();
  const session = readProfiles(path, warn).profiles[name]?.oauth;
  if (!session) {
    process.stdout.write(`Profile ${name} is not logged in.\n`);
    return;
  }
  let revoked = false;
  if (session.revocationEndpoint) {
    try {
      // Revoking the refresh token ends the whole login at the server: its access tokens too.
      await revokeToken(
        { issuer: session.issuer, revocationEndpoint: session.revocationEndpoint },
        {
          token: session.refreshToken ?? session.accessToken,
          tokenTypeHint: session.refreshToken ? "refresh_token" : "access_token",
          clientId: session.clientId,
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
          `retry, or remove it here only: patchbay logout${name === DEFAULT_PROFILE ? "" : ` --profile ${name}`} --forget`,
        );
      }
      warn(`warning: the login could not be revoked at ${session.issuer}; it is only removed here`);
    }
  }
  await withProfilesLock(path, async () => {
    const file = readProfiles(path, warn);
    const profile = file.profiles[name];
    if (!profile?.oauth) return;
    const { oauth: _removed, ...rest } = profile;
    writeProfiles(path, { profiles: { ...file.profiles, [name]: rest } });
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
  const command =
    process.platform === "darwin"
      ? ["open", url]
      : process.platform === "win32"
        ? ["cmd", "/c", "start", "", url]
        : process.env.DISPLAY || process.env.WAYLAND_DISPLAY
          ? ["xdg-open", url]
          : undefined;
  if (!command) return;
  const [bin = "", ...args] = command;
  try {
    const child = spawn(bin, args, { detached: true, stdio: "ignore" });
    child.on("error", () => {});
    child.unref();
  } catch {
    // the link is printed
  }
}

const nonEmpty = (value: string | undefined): string | undefined => (value === "" ? undefined : value);
