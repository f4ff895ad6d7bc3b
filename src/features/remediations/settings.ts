import { readFileSync } from "node:fs";
import { isAbsolute, normalize } from "node:path";
import { ConfigError } from "../../config-error.ts";
import type { SandboxMode } from "../../platform/sandbox/create-sandbox.ts";
import type { GithubAppSettings } from "../source-hosting/index.ts";

/** How the problem of a merged fix is watched (`PATCHBAY_FIX_WATCH_GRACE_MS`, `…_WINDOW_MS`). */
export type WatchSettings = {
  /** Without `service.version`: occurrences this long after the merge count against the fix (the deploy). */
  graceMs: number;
  /** Traffic over this long after the merge without an occurrence closes the problem as fixed. */
  quietWindowMs: number;
};

const DEFAULT_WATCH: WatchSettings = {
  graceMs: 60 * 60 * 1000,
  quietWindowMs: 3 * 24 * 60 * 60 * 1000,
};

export type RemediationSettings = {
  /**
   * `auto`: bubblewrap when `bwrap` works on this machine, else the process fallback (refused in
   * production). `bwrap`: bubblewrap or no remediation. `process`: the fallback, explicitly.
   */
  sandbox: SandboxMode;
  /** local-git repositories must lie under one of these directories; undefined: anywhere (not in production). */
  localGitRoots: string[] | undefined;
  /** Whether local-git repositories may be registered at all. */
  localGitEnabled: boolean;
  github: GithubAppSettings | undefined;
  /** How the problem of a merged fix is watched (`watch-fix.ts`). */
  watch: WatchSettings;
};

/**
 * `PATCHBAY_SANDBOX`, `PATCHBAY_LOCAL_GIT_ROOTS` (colon-separated absolute directories) and the
 * GitHub App (`PATCHBAY_GITHUB_APP_ID`, `PATCHBAY_GITHUB_APP_PRIVATE_KEY` or `…_FILE`,
 * `PATCHBAY_GITHUB_WEBHOOK_SECRET`, `PATCHBAY_GITHUB_APP_SLUG`, `PATCHBAY_GITHUB_CLIENT_ID`,
 * `PATCHBAY_GITHUB_CLIENT_SECRET`, optional `PATCHBAY_GITHUB_API_URL`
 * and `PATCHBAY_GITHUB_WEB_URL`). In production local-git needs explicit roots: a hosted service
 * must not let an admin point it at arbitrary directories of its own machine.
 */
export function readRemediationSettings(
  env: Record<string, string | undefined>,
  nodeEnv: "development" | "test" | "production",
): RemediationSettings {
  const sandbox = (env.PATCHBAY_SANDBOX?.trim() || "auto") as SandboxMode;
  if (!["auto", "bwrap", "process"].includes(sandbox)) {
    throw new ConfigError("PATCHBAY_SANDBOX", "must be auto, bwrap or process");
  }
  const rawRoots = env.PATCHBAY_LOCAL_GIT_ROOTS?.trim();
  const localGitRoots = rawRoots
    ? rawRoots.split(":").map((root) => {
        if (!isAbsolute(root) || normalize(root) !== root.replace(/(.)\/$/, "$1")) {
          throw new ConfigError("PATCHBAY_LOCAL_GIT_ROOTS", `"${root}" is not an absolute, normalised path`);
        }
        return root.replace(/(.)\/$/, "$1");
      })
    : undefined;
  return {
    sandbox,
    localGitRoots,
    localGitEnabled: nodeEnv !== "production" || localGitRoots !== undefined,
    github: readGithub(env),
    watch: {
      graceMs: readMs(env, "PATCHBAY_FIX_WATCH_GRACE_MS", DEFAULT_WATCH.graceMs),
      quietWindowMs: readMs(env, "PATCHBAY_FIX_WATCH_WINDOW_MS", DEFAULT_WATCH.quietWindowMs),
    },
  };
}

/** A duration in milliseconds: a non-negative integer. */
function readMs(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d{1,13}$/.test(raw)) throw new ConfigError(name, "must be a whole number of milliseconds");
  return Number(raw);
}

function readGithub(env: Record<string, string | undefined>): GithubAppSettings | undefined {
  const appId = env.PATCHBAY_GITHUB_APP_ID?.trim();
  if (!appId) return undefined;
  const need = (name: string): string => {
    const value = env[name]?.trim();
    if (!value) throw new ConfigError(name, "is required with PATCHBAY_GITHUB_APP_ID");
    return value;
  };
  let privateKey = env.PATCHBAY_GITHUB_APP_PRIVATE_KEY?.trim();
  const keyFile = env.PATCHBAY_GITHUB_APP_PRIVATE_KEY_FILE?.trim();
  if (!privateKey && keyFile) {
    try {
      privateKey = readFileSync(keyFile, "utf8");
    } catch {
      throw new ConfigError("PATCHBAY_GITHUB_APP_PRIVATE_KEY_FILE", "cannot be read");
    }
  }
  if (!privateKey)
    throw new ConfigError("PATCHBAY_GITHUB_APP_PRIVATE_KEY", "is required with PATCHBAY_GITHUB_APP_ID");
  const url = (name: string, fallback: string) => {
    const value = env[name]?.trim() || fallback;
    if (!/^https?:\/\//.test(value)) throw new ConfigError(name, "must be an http(s) URL");
    return value.replace(/\/+$/, "");
  };
  return {
    appId,
    privateKey: privateKey.replace(/\\n/g, "\n"),
    webhookSecret: need("PATCHBAY_GITHUB_WEBHOOK_SECRET"),
    slug: need("PATCHBAY_GITHUB_APP_SLUG"),
    clientId: need("PATCHBAY_GITHUB_CLIENT_ID"),
    clientSecret: need("PATCHBAY_GITHUB_CLIENT_SECRET"),
    apiUrl: url("PATCHBAY_GITHUB_API_URL", "https://api.github.com"),
    webUrl: url("PATCHBAY_GITHUB_WEB_URL", "https://github.com"),
  };
}
