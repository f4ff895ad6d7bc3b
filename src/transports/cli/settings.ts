import type { Command } from "commander";
import { CliError, exitCodes, usageError } from "./cli-error.ts";
import {
  assertProfileName,
  DEFAULT_PROFILE,
  type OAuthSession,
  profilesPath,
  readProfiles,
} from "./profiles.ts";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8787";

/** The options every command that calls the API takes. */
export type ClientFlags = { baseUrl?: string; profile?: string; apiKey?: string };

/** How requests authenticate: an API key, or the profile's `patchbay login` session. */
export type Credential =
  | { kind: "api_key"; key: string }
  | { kind: "oauth"; session: OAuthSession; path: string };

export type ClientSettings = { baseUrl: string; credential: Credential; profile: string };

export function addClientOptions(command: Command): Command {
  return command
    .option(
      "--base-url <url>",
      `patchbay's base URL (default: the profile's, else PATCHBAY_BASE_URL, else ${DEFAULT_BASE_URL})`,
    )
    .option("--profile <name>", `profile to use (default: "${DEFAULT_PROFILE}")`)
    .option(
      "--api-key <key>",
      "API key (default: PATCHBAY_API_KEY, else the profile's); prefer the variable or a profile, argv is visible to other users",
    );
}

/**
 * Where to send requests and with which credential. Base URL: --base-url, the profile's,
 * PATCHBAY_BASE_URL, the local default. Credential: --api-key, PATCHBAY_API_KEY, the profile's
 * login (patchbay login), the profile's stored key.
 */
export function resolveSettings(
  flags: ClientFlags,
  env: NodeJS.ProcessEnv = process.env,
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): ClientSettings {
  const profileName = flags.profile ?? DEFAULT_PROFILE;
  assertProfileName(profileName);
  const path = profilesPath(env);
  const profile = readProfiles(path, warn).profiles[profileName];
  if (flags.profile !== undefined && profile === undefined) {
    throw usageError(
      `there is no profile "${profileName}" in ${path}`,
      `create it: patchbay profile set --profile ${profileName} --base-url <url> --api-key-stdin`,
    );
  }
  const baseUrl = normalizeBaseUrl(
    flags.baseUrl ?? profile?.baseUrl ?? nonEmpty(env.PATCHBAY_BASE_URL) ?? DEFAULT_BASE_URL,
  );
  const apiKey = flags.apiKey ?? nonEmpty(env.PATCHBAY_API_KEY);
  const session = profile?.oauth;
  // A login belongs to the server it was made with: another --base-url does not get its token.
  const loginApplies = session !== undefined && apiKey === undefined && session.issuer === baseUrl;
  const credential: Credential | undefined = loginApplies
    ? { kind: "oauth", session, path }
    : (apiKey ?? profile?.apiKey)
      ? { kind: "api_key", key: apiKey ?? profile?.apiKey ?? "" }
      : undefined;
  if (credential === undefined || (credential.kind === "api_key" && credential.key === "")) {
    const flag = profileName === DEFAULT_PROFILE ? "" : ` --profile ${profileName}`;
    throw new CliError(
      "no_api_key",
      session
        ? `profile ${profileName} is logged in to ${session.issuer}, not ${baseUrl}`
        : "not logged in and no API key: run patchbay login, pass --api-key, set PATCHBAY_API_KEY, or store a key in a profile",
      exitCodes.auth,
      `patchbay login${flag}${flags.baseUrl ? ` --base-url ${baseUrl}` : ""}`,
    );
  }
  const url = new URL(baseUrl);
  if (url.protocol === "http:" && !isLoopback(url.hostname)) {
    warn(
      `warning: sending ${credential.kind === "oauth" ? "an access token" : "the API key"} over plain http to ${url.host}; use https`,
    );
  }
  return { baseUrl, credential, profile: profileName };
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
