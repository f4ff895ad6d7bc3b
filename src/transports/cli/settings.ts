import type { Command } from "commander";
import { CliError, exitCodes, usageError } from "./cli-error.ts";
import {
  DEFAULT_PROFILE,
  type OAuthSession,
  type Profile,
  profileFlag,
  profileName,
  profilesPath,
  readProfiles,
  toStderr,
} from "./profiles.ts";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8787";

export const baseUrlHelp = `patchbay's base URL (default: the profile's, else PATCHBAY_BASE_URL, else ${DEFAULT_BASE_URL})`;

/** The options every command that calls the API takes. */
export type ClientFlags = { baseUrl?: string; profile?: string; apiKey?: string };

/** How requests authenticate: an API key, or the profile's `patchbay login` session. */
export type Credential =
  | { kind: "api_key"; key: string }
  | { kind: "oauth"; session: OAuthSession; path: string };

export type ClientSettings = { baseUrl: string; credential: Credential; profile: string };

export function addClientOptions(command: Command): Command {
  return command
    .option("--base-url <url>", baseUrlHelp)
    .option("--profile <name>", `profile to use (default: "${DEFAULT_PROFILE}")`)
    .option(
      "--api-key <key>",
      "API key (default: PATCHBAY_API_KEY, else the profile's); prefer the variable or a profile, argv is visible to other users",
    );
}

/** --base-url, the profile's, PATCHBAY_BASE_URL, the local default. */
export const baseUrlFor = (flag: string | undefined, profile: Profile | undefined, env = process.env) =>
  normalizeBaseUrl(flag ?? profile?.baseUrl ?? nonEmpty(env.PATCHBAY_BASE_URL) ?? DEFAULT_BASE_URL);

/**
 * Where to send requests and with which credential. Credential: --api-key, PATCHBAY_API_KEY, the
 * profile's login (patchbay login), the profile's stored key.
 */
export function resolveSettings(
  flags: ClientFlags,
  env: NodeJS.ProcessEnv = process.env,
  warn: (line: string) => void = toStderr,
): ClientSettings {
  const name = profileName(flags.profile);
  const path = profilesPath(env);
  const profile = readProfiles(path, warn).profiles[name];
  if (flags.profile !== undefined && profile === undefined) {
    throw usageError(
      `there is no profile "${name}" in ${path}`,
      `create it: patchbay profile set --profile ${name} --base-url <url> --api-key-stdin`,
    );
  }
  const baseUrl = baseUrlFor(flags.baseUrl, profile, env);
  const apiKey = flags.apiKey ?? nonEmpty(env.PATCHBAY_API_KEY);
  const session = profile?.oauth;
  const key = apiKey ?? profile?.apiKey;
  // A login belongs to the server it was made with: another --base-url does not get its token.
  const credential: Credential | undefined =
    session !== undefined && apiKey === undefined && session.issuer === baseUrl
      ? { kind: "oauth", session, path }
      : key
        ? { kind: "api_key", key }
        : undefined;
  if (credential === undefined) {
    throw new CliError(
      "no_api_key",
      session
        ? `profile ${name} is logged in to ${session.issuer}, not ${baseUrl}`
        : "not logged in and no API key: run patchbay login, pass --api-key, set PATCHBAY_API_KEY, or store a key in a profile",
      exitCodes.auth,
      `patchbay login${profileFlag(name)}${flags.baseUrl ? ` --base-url ${baseUrl}` : ""}`,
    );
  }
  const url = new URL(baseUrl);
  if (url.protocol === "http:" && !isLoopback(url.hostname)) {
    warn(
      `warning: sending ${credential.kind === "oauth" ? "an access token" : "the API key"} over plain http to ${url.host}; use https`,
    );
  }
  return { baseUrl, credential, profile: name };
}

/** An http(s) URL without a trailing slash; a path prefix (behind a proxy) is kept. */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw usageError(`--base-url: "${raw}" is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw usageError("--base-url must be http or https");
  if (url.username || url.password || url.search || url.hash) {
    throw usageError("--base-url takes no credentials, query or fragment");
  }
  return url.href.replace(/\/+$/, "");
}

const nonEmpty = (value: string | undefined): string | undefined => (value === "" ? undefined : value);

const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
