import { execFile } from "node:child_process";

export type GitResult = { code: number; stdout: string; stderr: string };

/**
 * Options that keep a repository's own configuration from running code in patchbay's process
 * user: no hooks (a registered repository's `reference-transaction` or `post-checkout` hook would
 * otherwise run on every ref patchbay writes), no fsmonitor command, no pager, no credential
 * prompts. A repository's `.git/config` is still read for everything else.
 */
const SAFE_CONFIG = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.pager=cat",
  "credential.helper=",
  "protocol.file.allow=always",
].flatMap((setting) => ["-c", setting]);

/** A scrubbed environment: nothing of the service's own (keys, database URLs) reaches git. */
function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: "/nonexistent",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: "patchbay",
    GIT_AUTHOR_EMAIL: "remediation@patchbay.invalid",
    GIT_COMMITTER_NAME: "patchbay",
    GIT_COMMITTER_EMAIL: "remediation@patchbay.invalid",
    LANG: "C",
    ...extra,
  };
}

/** Runs git in `cwd`; never throws on a non-zero exit (callers decide what it means). */
export function git(
  cwd: string,
  args: string[],
  opts: { env?: Record<string, string>; input?: string; maxBuffer?: number; timeoutMs?: number } = {},
): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      [...SAFE_CONFIG, ...args],
      {
        cwd,
        env: gitEnv(opts.env),
        maxBuffer: opts.maxBuffer ?? 32 * 1024 * 1024,
        timeout: opts.timeoutMs ?? 60_000,
        encoding: "utf8",
      },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== "number") {
          reject(error);
          return;
        }
        resolve({ code: typeof error?.code === "number" ? error.code : 0, stdout, stderr });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Like `git`, but a non-zero exit is an error naming the command (for steps that must work). */
export async function gitOk(
  cwd: string,
  args: string[],
  opts: Parameters<typeof git>[2] = {},
): Promise<string> {
  const result = await git(cwd, args, opts);
  if (result.code !== 0) {
    throw new Error(`git ${args[0]} failed (${result.code}): ${result.stderr.trim().slice(0, 500)}`);
  }
  return result.stdout;
}

/** A branch name git accepts (`git check-ref-format --branch`), checked without a repository. */
export async function isValidBranchName(name: string): Promise<boolean> {
  if (name.startsWith("-")) return false;
  const result = await git("/", ["check-ref-format", "--branch", name]);
  return result.code === 0;
}
