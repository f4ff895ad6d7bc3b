import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { git, gitOk } from "../../platform/git.ts";
import { branchFor, type SourceHost } from "./source-host.ts";

const ZERO = "0000000000000000000000000000000000000000";

/**
 * The embedded default: repositories registered by path on this machine. The change becomes a
 * commit on `patchbay/<id>` written with plumbing only (objects, a private index, `update-ref`):
 * the human's work tree, index and checked-out branch are never touched, and hooks never run.
 * The "pull request" is patchbay's review page, `{baseUrl}/remediations/{id}/review`.
 */
export function localGitHost(opts: { baseUrl: string }): SourceHost {
  const pathOf = (repo: { path: string | null; id: string }) => {
    if (!repo.path) throw new Error(`repository ${repo.id} has no path`);
    return repo.path;
  };
  return {
    async resolveBase(repo) {
      return (
        await gitOk(pathOf(repo), ["rev-parse", "--verify", `refs/heads/${repo.defaultBranch}^{commit}`])
      ).trim();
    },

    async archive(repo, commit) {
      const archive = await new Promise<Buffer>((resolve, reject) => {
        execFile(
          "git",
          ["-c", "core.hooksPath=/dev/null", "archive", "--format=tar", commit],
          {
            cwd: pathOf(repo),
            encoding: "buffer",
            maxBuffer: 256 * 1024 * 1024,
            env: {
              PATH: process.env.PATH ?? "/usr/bin:/bin",
              GIT_CONFIG_NOSYSTEM: "1",
              HOME: "/nonexistent",
            },
          },
          (error, stdout) => (error ? reject(error) : resolve(stdout)),
        );
      });
      return { archive, stripComponents: 0 };
    },

    async pushChange(repo, change) {
      const path = pathOf(repo);
      const branch = branchFor(change.remediationId);
      const ref = `refs/heads/${branch}`;
      const scratch = await mkdtemp(join(tmpdir(), "patchbay-idx-"));
      try {
        const env = { GIT_INDEX_FILE: join(scratch, "index") };
        await gitOk(path, ["read-tree", change.baseCommit], { env });
        for (const file of change.files) {
          if (file.content === null) {
            await gitOk(path, ["update-index", "--force-remove", "--", file.path], { env });
            continue;
          }
          const blob = (await gitOk(path, ["hash-object", "-w", "--stdin"], { input: file.content })).trim();
          const existing = (await gitOk(path, ["ls-tree", change.baseCommit, "--", file.path])).trim();
          const mode = /^(\d+) blob /.exec(existing)?.[1] ?? "100644";
          await gitOk(path, ["update-index", "--add", "--cacheinfo", `${mode},${blob},${file.path}`], {
            env,
          });
        }
        const tree = (await gitOk(path, ["write-tree"], { env })).trim();
        // A step run again after a crash finds its branch: the same tree on the same base is reused.
        const current = await git(path, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
        if (current.code === 0) {
          const head = current.stdout.trim();
          const [headTree, parent] = (await gitOk(path, ["show", "-s", "--format=%T %P", head]))
            .trim()
            .split(" ");
          if (headTree === tree && parent === change.baseCommit) return { branch, headCommit: head };
          throw new Error(`branch ${branch} already exists with other content; refusing to overwrite it`);
        }
        const commit = (
          await gitOk(path, ["commit-tree", tree, "-p", change.baseCommit, "-F", "-"], {
            input: change.message,
          })
        ).trim();
        // Create-only: the zero old value makes a concurrent creator lose instead of overwrite.
        await gitOk(path, ["update-ref", "-m", "patchbay remediation", ref, commit, ZERO]);
        return { branch, headCommit: commit };
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    },

    async openReview(_repo, review) {
      return { prUrl: `${opts.baseUrl}/remediations/${review.remediationId}/review`, prNumber: null };
    },
  };
}
