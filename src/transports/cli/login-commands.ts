import type { Command } from "commander";
import type { Me } from "../../features/me/schemas.ts";
import { CLI_CLIENT_ID, DEVICE_CODE_GRANT } from "../../features/oauth/cli-client.ts";
import { CliError, exitCodes, usageError } from "./cli-error.ts";
import { loginScopes } from "./command-scopes.ts";
import { json, keyValue, styleFor, table } from "./format.ts";
import {
  type DeviceAuthorization,
  discoverServer,
  OAuthError,
  post,
  requestToken,
  type ServerMetadata,
  sessionFromTokens,
  type TokenResponse,
} from "./oauth.ts";
import {
  addClientOptions,
  baseUrlFor,
  baseUrlHelp,
  DEFAULT_PROFILE,
  normalizeBaseUrl,
  profileFlag,
  profileName,
  profilesPath,
  readProfiles,
  toStderr,
  updateProfile,
  withProfilesLock,
  writeProfiles,
} from "./profiles.ts";
import { jsonHelp, openSession, type SessionFlags } from "./session.ts";
import { readSecretFromStdin } from "./terminal.ts";

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

async function login(flags: { baseUrl?: string; profile?: string; browser?: boolean; json?: boolean }) {
  const name = profileName(flags.profile);
  const path = profilesPath();
  const baseUrl = baseUrlFor(flags.baseUrl, readProfiles(path).profiles[name]);
  const server = await discoverServer(baseUrl);
  const form = { client_id: CLI_CLIENT_ID, scope: loginScopes.join(" "), resource: `${baseUrl}/api/v1` };
  const device = (await post(server.deviceAuthorizationEndpoint, baseUrl, form, [
    "device_code",
    "user_code",
  ]).catch((error: unknown) => {
    throw error instanceof OAuthError
      ? new CliError("oauth_error", `the server refused to start a login: ${error.message}`, exitCodes.other)
      : error;
  })) as DeviceAuthorization;

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
  const settings = { baseUrl, profile: name, credential: { kind: "oauth" as const, session, path } };
  const me = (await openSession({}, {}, settings).request({ method: "GET", path: "/me" })) as Me;
  await withProfilesLock(path, async () =>
    updateProfile(path, name, ({ apiKey, ...kept }) => {
      if (apiKey) toStderr(`note: the API key stored in profile ${name} was removed; the login replaces it`);
      return { ...kept, baseUrl, oauth: session };
    }),
  );
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

async function logout(flags: { profile?: string; forget?: boolean }): Promise<void> {
  const name = profileName(flags.profile);
  const path = profilesPath();
  const session = readProfiles(path).profiles[name]?.oauth;
  if (!session) return void process.stdout.write(`Profile ${name} is not logged in.\n`);
  let revoked = false;
  if (session.revocationEndpoint) {
    try {
      // Revoking the refresh token ends the whole login at the server: its access tokens too.
      // RFC 7009: the server answers 200 for any token, known or not.
      await post(
        session.revocationEndpoint,
        session.issuer,
        {
          token: session.refreshToken ?? session.accessToken,
          token_type_hint: session.refreshToken ? "refresh_token" : "access_token",
          client_id: session.clientId,
        },
        [],
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
    if (readProfiles(path).profiles[name]?.oauth) updateProfile(path, name, ({ oauth, ...rest }) => rest);
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
    const { spawn } = process.getBuiltinModule("node:child_process");
    const child = spawn(bin, args, { detached: true, stdio: "ignore" });
    child.on("error", () => {});
    child.unref();
  } catch {
    // the link is printed
  }
}

/** `whoami`: who the credential acts as, and where. */
export function registerWhoamiCommand(program: Command): void {
  const command = program
    .command("whoami")
    .description("Show who you are to the API: user, organisation, role, permissions, credential")
    .option("--json", jsonHelp);
  addClientOptions(command).action(async (flags: SessionFlags) => {
    const session = openSession(flags);
    const me = (await session.request({ method: "GET", path: "/me" })) as Me;
    const { baseUrl, profile } = session.settings();
    const credential =
      me.actor.type === "oauth_token"
        ? `login (OAuth grant ${me.actor.id}, client ${me.actor.clientId ?? "?"})`
        : `${me.actor.type} ${me.actor.id}`;
    session.show(
      me,
      keyValue([
        ["User", `${me.user.email} (${me.user.id})`],
        ["Organisation", `${me.organization.name} (${me.organization.id})`],
        ["Role", me.role],
        ["Permissions", me.permissions.join(", ") || "none"],
        ["Credential", credential],
        ["Base URL", baseUrl],
        ["Profile", profile],
      ]),
    );
  });
}

/**
 * Stored connection targets. `patchbay login` keeps a login session in a profile;
 * `profile set --api-key-stdin` keeps an API key (for automation) out of every command line.
 * Neither is ever printed back.
 */
export function registerProfileCommands(program: Command): void {
  const profile = program
    .command("profile")
    .description("Stored base URLs and API keys (profiles.json, mode 0600)");

  profile
    .command("set")
    .description("Create or change a profile")
    .option("--profile <name>", `profile to change (default: "${DEFAULT_PROFILE}")`)
    .option("--base-url <url>", "patchbay's base URL for this profile")
    .option("--api-key-stdin", "read an API key from stdin and store it (one trailing newline is dropped)")
    .action(async (flags: { profile?: string; baseUrl?: string; apiKeyStdin?: boolean }) => {
      const name = profileName(flags.profile);
      if (flags.baseUrl === undefined && !flags.apiKeyStdin) {
        throw usageError("nothing to set: give --base-url and/or --api-key-stdin");
      }
      const baseUrl = flags.baseUrl === undefined ? undefined : normalizeBaseUrl(flags.baseUrl);
      const apiKey = flags.apiKeyStdin ? await readSecretFromStdin("API key") : undefined;
      if (apiKey !== undefined && !/^[\x21-\x7e]{1,512}$/.test(apiKey)) {
        throw usageError("the API key on stdin must be one word of visible ASCII");
      }
      const path = profilesPath();
      const { profiles } = readProfiles(path);
      if (apiKey !== undefined && profiles[name]?.oauth) {
        throw usageError(
          `profile ${name} is logged in; a profile holds one credential`,
          `log out first (patchbay logout${profileFlag(name)}), or use another --profile`,
        );
      }
      const next = { ...profiles[name], ...(baseUrl ? { baseUrl } : {}), ...(apiKey ? { apiKey } : {}) };
      writeProfiles(path, { profiles: { ...profiles, [name]: next } });
      process.stdout.write(
        `Profile ${name} saved in ${path}: base URL ${next.baseUrl ?? "(not set)"}, API key ${next.apiKey ? "stored" : "not stored"}.\n`,
      );
      if (apiKey) toStderr(`check it with: patchbay whoami${profileFlag(name)}`);
    });

  profile
    .command("list")
    .description("List profiles (keys are never shown, only whether one is stored)")
    .option("--json", "print JSON")
    .action((flags: { json?: boolean }) => {
      const path = profilesPath();
      const rows = Object.entries(readProfiles(path).profiles).map(([name, p]) => ({
        name,
        baseUrl: p.baseUrl ?? null,
        apiKeyStored: p.apiKey !== undefined,
        loggedIn: p.oauth !== undefined,
      }));
      const cells = rows.map((r) => [
        r.name,
        r.baseUrl ?? "-",
        r.apiKeyStored ? "stored" : "-",
        r.loggedIn ? "yes" : "-",
      ]);
      process.stdout.write(
        flags.json
          ? json({ path, profiles: rows })
          : rows.length === 0
            ? `No profiles in ${path}.\n`
            : table(["PROFILE", "BASE URL", "API KEY", "LOGIN"], cells),
      );
    });

  profile
    .command("remove")
    .description("Remove a profile and its stored key (log out first to revoke a login)")
    .argument("<name>", "the profile")
    .action((name: string) => {
      profileName(name);
      const path = profilesPath();
      const { [name]: removed, ...rest } = readProfiles(path).profiles;
      if (!removed) {
        throw new CliError("not_found", `there is no profile "${name}" in ${path}`, exitCodes.notFound);
      }
      if (removed.oauth) {
        throw usageError(
          `profile ${name} is logged in`,
          `log out first, which also revokes the login: patchbay logout --profile ${name}`,
        );
      }
      writeProfiles(path, { profiles: rest });
      process.stdout.write(`Removed profile ${name}.\n`);
    });
}
