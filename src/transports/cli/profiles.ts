import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import type { Command } from "commander";
import { CliError, exitCodes, usageError } from "./cli-error.ts";
import { isRecord, parseJson, strings } from "./format.ts";

/**
 * A `patchbay login` session: the tokens, and where to refresh and revoke them. The refresh token
 * rotates on every use, so this is rewritten (under a lock, see oauth.ts) each time.
 */
export type OAuthSession = {
  issuer: string;
  clientId: string;
  tokenEndpoint: string;
  revocationEndpoint?: string;
  accessToken: string;
  refreshToken?: string;
  /** When the access token expires (ms since the epoch). */
  expiresAt: number;
  scope: string;
};

/**
 * One named connection target and its credential: an API key or a login (OAuth) session. The
 * credential is stored only here, in a file only the user can read.
 */
export type Profile = {
  baseUrl?: string;
  apiKey?: string;
  oauth?: OAuthSession;
  /** `patchbay environment use`: the environment commands act on when --environment is not given. */
  environment?: ProfileEnvironment;
};
export type ProfileEnvironment = { id: string; name: string };
export type ProfileFile = { profiles: Record<string, Profile> };

export const DEFAULT_PROFILE = "default";
const profileNamePattern = /^[A-Za-z0-9._-]{1,64}$/;

/** `$XDG_CONFIG_HOME/patchbay/profiles.json`, else `~/.config/patchbay/profiles.json`. */
export function profilesPath(env: NodeJS.ProcessEnv = process.env): string {
  const configHome = env.XDG_CONFIG_HOME?.startsWith("/") ? env.XDG_CONFIG_HOME : join(homedir(), ".config");
  return join(configHome, "patchbay", "profiles.json");
}

/** The profile named (default "default"), its name checked. */
export function profileName(name: string = DEFAULT_PROFILE): string {
  if (!profileNamePattern.test(name)) {
    throw usageError(`profile names are 1–64 letters, digits, '.', '_' or '-' (got "${name}")`);
  }
  return name;
}

/** The `--profile` flag that names the profile again in a suggested command; none for the default. */
export const profileFlag = (name: string): string => (name === DEFAULT_PROFILE ? "" : ` --profile ${name}`);

export const toStderr = (line: string): void => void process.stderr.write(`${line}\n`);

/** The stored profiles; none when the file does not exist yet. */
export function readProfiles(path: string, warn: (line: string) => void = toStderr): ProfileFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return { profiles: {} };
    const why = error instanceof Error ? error.message : String(error);
    throw new CliError("config", `cannot read ${path}: ${why}`, exitCodes.other);
  }
  // A key file others can read is a leaked key; say so rather than silently using it.
  if ((statSync(path).mode & 0o077) !== 0)
    warn(`warning: ${path} is readable by other users; run chmod 600 ${path}`);
  const parsed = parseJson(text);
  if (!isRecord(parsed) || !isRecord(parsed.profiles)) {
    throw new CliError("config", `${path} is not a patchbay profiles file`, exitCodes.other);
  }
  const profiles: Record<string, Profile> = {};
  for (const [name, value] of Object.entries(parsed.profiles)) {
    if (!isRecord(value)) continue;
    const oauth = parseSession(value.oauth);
    const environment = isRecord(value.environment) ? strings(value.environment, ["id", "name"]) : {};
    profiles[name] = {
      ...strings(value, ["baseUrl", "apiKey"]),
      ...(oauth ? { oauth } : {}),
      ...(environment.id && environment.name
        ? { environment: { id: environment.id, name: environment.name } }
        : {}),
    };
  }
  return { profiles };
}

/**
 * Writes the file with mode 0600 in a directory of mode 0700. The new content goes to a
 * temporary file created 0600 and is renamed over the old one, so the key is never briefly
 * readable by others and a crash never leaves half a file.
 */
export function writeProfiles(path: string, data: ProfileFile): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  rmSync(temporary, { force: true }); // a leftover from a crash could have any mode: start afresh
  writeFileSync(temporary, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  renameSync(temporary, path);
}

const STALE_MS = 30_000;
const GIVE_UP_MS = 15_000;

/**
 * Runs `fn` holding `<profiles>.lock`, so two patchbay processes never refresh the same login at
 * once: refresh tokens rotate, and the server treats a refresh token used twice as stolen and
 * ends the whole login. A lock left by a crashed process is taken over after 30 s.
 */
export async function withProfilesLock<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${path}.lock`;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const deadline = Date.now() + GIVE_UP_MS;
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: "wx", mode: 0o600 });
      break;
    } catch (error) {
      if (!isErrno(error, "EEXIST")) throw error;
    }
    if (isStale(lock)) {
      rmSync(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new CliError(
        "locked",
        `another patchbay process holds ${lock}`,
        exitCodes.other,
        `retry; if no other patchbay is running, remove ${lock}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 50));
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

function isStale(lock: string): boolean {
  try {
    return Date.now() - statSync(lock).mtimeMs > STALE_MS;
  } catch {
    return false; // gone already: the next attempt takes it
  }
}

/** A stored session, or undefined when it is absent or not one (then `patchbay login` again). */
function parseSession(value: unknown): OAuthSession | undefined {
  if (!isRecord(value) || typeof value.expiresAt !== "number") return undefined;
  const fields = strings(value, [
    ...["issuer", "clientId", "tokenEndpoint", "accessToken"],
    ...["revocationEndpoint", "refreshToken", "scope"],
  ]);
  const { issuer, clientId, tokenEndpoint, accessToken, scope = "" } = fields;
  if (!issuer || !clientId || !tokenEndpoint || !accessToken) return undefined;
  return { ...fields, issuer, clientId, tokenEndpoint, accessToken, expiresAt: value.expiresAt, scope };
}

const isErrno = (error: unknown, code: string): boolean =>
  error instanceof Error && "code" in error && error.code === code;

export const DEFAULT_BASE_URL = "http://127.0.0.1:8787";

export const baseUrlHelp = `patchbay's base URL (default: the profile's, else PATCHBAY_BASE_URL, else ${DEFAULT_BASE_URL})`;

/** The options every command that calls the API takes. */
export type ClientFlags = { baseUrl?: string; profile?: string; apiKey?: string };

/** Where requests go, and how they authenticate: an API key, or the profile's `patchbay login` session. */
export type ClientSettings = {
  baseUrl: string;
  credential: { kind: "api_key"; key: string } | { kind: "oauth"; session: OAuthSession; path: string };
  profile: string;
  /** The profile's remembered environment (`patchbay environment use`). */
  environment?: ProfileEnvironment | undefined;
};

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
  normalizeBaseUrl(flag ?? profile?.baseUrl ?? (env.PATCHBAY_BASE_URL || DEFAULT_BASE_URL));

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
  const apiKey = flags.apiKey ?? (env.PATCHBAY_API_KEY || undefined);
  const session = profile?.oauth;
  const key = apiKey ?? profile?.apiKey;
  // A login belongs to the server it was made with: another --base-url does not get its token.
  const credential: ClientSettings["credential"] | undefined =
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
  return { baseUrl, credential, profile: name, environment: profile?.environment };
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

const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);

/** Puts `change` of profile `name` into the file (the profile starts empty when new). */
export function updateProfile(path: string, name: string, change: (profile: Profile) => Profile): void {
  const { profiles } = readProfiles(path);
  writeProfiles(path, { profiles: { ...profiles, [name]: change(profiles[name] ?? {}) } });
}
