import type { Command } from "commander";
import { CliError, exitCodes, usageError } from "./cli-error.ts";
import { assertProfileName, DEFAULT_PROFILE, profilesPath, readProfiles } from "./profiles.ts";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8787";

/** The options every command that calls the API takes. */
export type ClientFlags = { baseUrl?: string; profile?: string; apiKey?: string };

export type ClientSettings = { baseUrl: string; apiKey: string; profile: string };

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
 * Where to send requests and with which key. Base URL: --base-url, the profile's, PATCHBAY_BASE_URL,
 * the local default. Key: --api-key, PATCHBAY_API_KEY, the profile's.
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
  const apiKey = flags.apiKey ?? nonEmpty(env.PATCHBAY_API_KEY) ?? profile?.apiKey;
  if (apiKey === undefined || apiKey === "") {
    throw new CliError(
      "no_api_key",
      "no API key: pass --api-key, set PATCHBAY_API_KEY, or store one in a profile",
      exitCodes.auth,
      `printf '%s' "$KEY" | patchbay profile set${profileName === DEFAULT_PROFILE ? "" : ` --profile ${profileName}`} --api-key-stdin`,
    );
  }
  const url = new URL(baseUrl);
  if (url.protocol === "http:" && !isLoopback(url.hostname)) {
    warn(`warning: sending the API key over plain http to ${url.host}; use https`);
  }
  return { baseUrl, apiKey, profile: profileName };
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
