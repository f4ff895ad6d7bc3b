import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: "/nonexistent",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "Dev",
  GIT_AUTHOR_EMAIL: "dev@example.com",
  GIT_COMMITTER_NAME: "Dev",
  GIT_COMMITTER_EMAIL: "dev@example.com",
};

export type GitRepo = {
  path: string;
  git(...args: string[]): string;
  write(files: Record<string, string>): void;
  remove(): void;
};

/** A real git repository in a temp dir (canonical path), with `files` committed on `branch`. */
export function makeGitRepo(files: Record<string, string>, opts: { branch?: string } = {}): GitRepo {
  const path = realpathSync(mkdtempSync(join(tmpdir(), "patchbay-repo-")));
  const git = (...args: string[]) => execFileSync("git", args, { cwd: path, env, encoding: "utf8" });
  const write = (more: Record<string, string>) => {
    for (const [name, content] of Object.entries(more)) {
      mkdirSync(dirname(join(path, name)), { recursive: true });
      writeFileSync(join(path, name), content);
    }
  };
  git("init", "-q", "-b", opts.branch ?? "main");
  write(files);
  git("add", "-A");
  git("commit", "-q", "-m", "initial");
  return { path, git, write, remove: () => rmSync(path, { recursive: true, force: true }) };
}
