import type { Octokit } from "@octokit/core";
import { branchFor, type SourceHost } from "../source-host.ts";

type RepoRef = { owner: string; repo: string };

const refOf = (repo: { fullName: string | null; id: string }): RepoRef => {
  const [owner, name] = (repo.fullName ?? "").split("/");
  if (!owner || !name) throw new Error(`repository ${repo.id} has no owner/name`);
  return { owner, repo: name };
};

/**
 * GitHub as a source host, through an installation token: the base from the branch ref, files
 * from the tarball, the change as blobs → tree → commit → `refs/heads/patchbay/<id>` (git data
 * API; the branch is created, never force-moved), then a **draft** pull request. Each step
 * looks for what a previous attempt made first. There is no call that merges.
 */
export function githubHost(installation: (installationId: number) => Promise<Octokit>): SourceHost {
  const client = (repo: { installationId: number | null; id: string }) => {
    if (!repo.installationId) throw new Error(`repository ${repo.id} has no installation`);
    return installation(repo.installationId);
  };
  return {
    async resolveBase(repo) {
      const octokit = await client(repo);
      const { data } = await octokit.request("GET /repos/{owner}/{repo}/git/ref/{ref}", {
        ...refOf(repo),
        ref: `heads/${repo.defaultBranch}`,
      });
      return data.object.sha;
    },

    async archive(repo, commit) {
      const octokit = await client(repo);
      const { data } = await octokit.request("GET /repos/{owner}/{repo}/tarball/{ref}", {
        ...refOf(repo),
        ref: commit,
      });
      // Octokit hands a binary body over as an ArrayBuffer (it follows the redirect to codeload).
      if (!(data instanceof ArrayBuffer))
        throw new Error("GitHub answered the tarball request without a binary body");
      const archive = Buffer.from(data);
      // GitHub's tarballs hold one top directory, `<owner>-<repo>-<sha>/`.
      return { archive, stripComponents: 1 };
    },

    async pushChange(repo, change) {
      const octokit = await client(repo);
      const where = refOf(repo);
      const branch = branchFor(change.remediationId);
      const base = await octokit.request("GET /repos/{owner}/{repo}/git/commits/{commit_sha}", {
        ...where,
        commit_sha: change.baseCommit,
      });
      const modes = await fileModes(octokit, where, base.data.tree.sha);
      const entries = [];
      for (const file of change.files) {
        const mode = (modes.get(file.path) ?? "100644") as "100644" | "100755";
        if (file.content === null) {
          entries.push({ path: file.path, mode, type: "blob" as const, sha: null });
          continue;
        }
        const blob = await octokit.request("POST /repos/{owner}/{repo}/git/blobs", {
          ...where,
          content: file.content,
          encoding: "utf-8",
        });
        entries.push({ path: file.path, mode, type: "blob" as const, sha: blob.data.sha });
      }
      const tree = await octokit.request("POST /repos/{owner}/{repo}/git/trees", {
        ...where,
        base_tree: base.data.tree.sha,
        tree: entries,
      });
      const existing = await octokit
        .request("GET /repos/{owner}/{repo}/git/ref/{ref}", { ...where, ref: `heads/${branch}` })
        .catch((error: { status?: number }) => {
          if (error.status === 404) return undefined;
          throw error;
        });
      if (existing) {
        // A previous attempt got this far: same tree on the same base is the same change.
        const head = await octokit.request("GET /repos/{owner}/{repo}/git/commits/{commit_sha}", {
          ...where,
          commit_sha: existing.data.object.sha,
        });
        if (head.data.tree.sha === tree.data.sha && head.data.parents[0]?.sha === change.baseCommit) {
          return { branch, headCommit: head.data.sha };
        }
        throw new Error(
          `branch ${branch} already exists on GitHub with other content; refusing to overwrite it`,
        );
      }
      const commit = await octokit.request("POST /repos/{owner}/{repo}/git/commits", {
        ...where,
        message: change.message,
        tree: tree.data.sha,
        parents: [change.baseCommit],
      });
      await octokit.request("POST /repos/{owner}/{repo}/git/refs", {
        ...where,
        ref: `refs/heads/${branch}`,
        sha: commit.data.sha,
      });
      return { branch, headCommit: commit.data.sha };
    },

    async openReview(repo, review) {
      const octokit = await client(repo);
      const where = refOf(repo);
      const open = await octokit.request("GET /repos/{owner}/{repo}/pulls", {
        ...where,
        head: `${where.owner}:${review.branch}`,
        state: "all",
      });
      const found = open.data[0];
      if (found) return { prUrl: found.html_url, prNumber: found.number };
      const created = await octokit.request("POST /repos/{owner}/{repo}/pulls", {
        ...where,
        title: review.title,
        head: review.branch,
        base: repo.defaultBranch,
        body: review.body,
        draft: true,
        maintainer_can_modify: true,
      });
      return { prUrl: created.data.html_url, prNumber: created.data.number };
    },
  };
}

/** The base tree's file modes, so an executable stays executable; a truncated listing falls back to 100644. */
async function fileModes(octokit: Octokit, where: RepoRef, treeSha: string): Promise<Map<string, string>> {
  const { data } = await octokit.request("GET /repos/{owner}/{repo}/git/trees/{tree_sha}", {
    ...where,
    tree_sha: treeSha,
    recursive: "1",
  });
  return new Map(data.tree.flatMap((e) => (e.type === "blob" && e.path && e.mode ? [[e.path, e.mode]] : [])));
}
