import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { AppError } from "../../errors.ts";
import type { ChangedFile } from "../db/schema/remediations.ts";
import { git, gitOk } from "../git.ts";
import type { Runner } from "./runners.ts";
import {
  DEFAULT_LIMITS,
  type FileEntry,
  type RunLimits,
  type Sandbox,
  type SearchHit,
  type Workspace,
} from "./sandbox.ts";
import { checkRelativePath, MAX_FILE_BYTES, resolveInside } from "./workspace-paths.ts";

const MAX_ARCHIVE_BYTES = 256 * 1024 * 1024;
const MAX_LISTED = 1_000;
const MAX_HITS = 200;
const MAX_DIFF_BYTES = 512 * 1024;

/**
 * A sandbox whose working copies live in this machine's temp directory: `<root>/src` is the
 * repository (the only thing a command can write), `<root>/git` a git directory kept outside it,
 * so nothing a test run writes can configure the git that patchbay itself runs afterwards.
 */
export function localSandbox(runner: Runner): Sandbox {
  return {
    kind: runner.kind,
    isolation: runner.isolation,
    async createWorkspace(source) {
      if (source.archive.length > MAX_ARCHIVE_BYTES) {
        throw new AppError(
          "invalid_repository",
          `The repository archive exceeds ${MAX_ARCHIVE_BYTES} bytes.`,
        );
      }
      const workspace = new LocalWorkspace(await mkdtemp(join(tmpdir(), "patchbay-ws-")), runner);
      try {
        await mkdir(workspace.src);
        await mkdir(workspace.home);
        await extract(source.archive, workspace.src, source.stripComponents ?? 0);
        await workspace.git(["init", "-q"]);
        await workspace.git(["add", "-A", "--force"]);
        await workspace.git(["commit", "-q", "--allow-empty", "--no-verify", "-m", "base"]);
        return workspace;
      } catch (error) {
        await workspace.dispose();
        throw error;
      }
    },
  };
}

class LocalWorkspace implements Workspace {
  readonly #written = new Map<string, string>();
  readonly root: string;
  readonly runner: Runner;
  readonly src: string;
  readonly home: string;
  /** The repository's git directory, kept outside the working copy a command can write. */
  readonly #repository: string[];

  constructor(root: string, runner: Runner) {
    this.root = root;
    this.runner = runner;
    this.src = join(root, "src");
    this.home = join(root, "home");
    this.#repository = [`--git-dir=${join(root, "git")}`, `--work-tree=${this.src}`];
  }

  git(args: string[], opts: Parameters<typeof git>[2] = {}) {
    return gitOk(this.src, [...this.#repository, ...args], opts);
  }

  async listFiles(dir = ""): Promise<FileEntry[]> {
    const rel = checkRelativePath(dir, { allowRoot: true });
    const full = await resolveInside(this.src, rel);
    const entries = await readdir(full, { withFileTypes: true }).catch(() => {
      throw new AppError("not_found", `No directory "${dir}" in the repository.`);
    });
    return entries
      .filter((e) => !(rel === "" && e.name === ".git"))
      .filter((e) => e.isFile() || e.isDirectory())
      .map(
        (e): FileEntry => ({
          path: rel ? `${rel}/${e.name}` : e.name,
          type: e.isDirectory() ? "dir" : "file",
        }),
      )
      .sort((a, b) => a.path.localeCompare(b.path))
      .slice(0, MAX_LISTED);
  }

  async readFile(path: string): Promise<string> {
    const rel = checkRelativePath(path);
    const full = await resolveInside(this.src, rel);
    const data = await readFile(full).catch(() => {
      throw new AppError("not_found", `No file "${path}" in the repository.`);
    });
    if (data.length > MAX_FILE_BYTES) {
      return `${data.subarray(0, MAX_FILE_BYTES).toString("utf8")}\n…[truncated by patchbay: ${data.length - MAX_FILE_BYTES} more bytes]`;
    }
    return data.toString("utf8");
  }

  async writeFile(path: string, content: string): Promise<void> {
    const rel = checkRelativePath(path);
    if (Buffer.byteLength(content) > MAX_FILE_BYTES) {
      throw new AppError("invalid_request", `A file may hold at most ${MAX_FILE_BYTES} bytes.`);
    }
    const full = await resolveInside(this.src, rel);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, content);
    this.#written.set(rel, content);
  }

  async searchFiles(query: string): Promise<SearchHit[]> {
    if (query.length === 0 || query.length > 200)
      throw new AppError("invalid_request", "query must be 1–200 characters.");
    // Tracked files plus what was written since: `git grep` on the index would miss new files.
    const grep = ["grep", "-n", "-I", "--untracked", "--fixed-strings", "-e", query];
    const result = await git(this.src, [...this.#repository, ...grep]);
    if (result.code > 1) throw new Error(`git grep failed: ${result.stderr.slice(0, 200)}`);
    return result.stdout
      .split("\n")
      .filter(Boolean)
      .slice(0, MAX_HITS)
      .map((line) => {
        const m = /^(.*?):(\d+):(.*)$/.exec(line);
        return { path: m?.[1] ?? line, line: Number(m?.[2] ?? 0), text: (m?.[3] ?? "").slice(0, 400) };
      });
  }

  async run(command: string, limits: Partial<RunLimits> = {}) {
    return this.runner.run(this.src, command, { ...DEFAULT_LIMITS, ...limits }, this.home);
  }

  async proposedChange(): Promise<{ files: ChangedFile[]; diff: string; created: string[] }> {
    const files: ChangedFile[] = [];
    const created: string[] = [];
    const index = join(this.root, "proposal.index");
    const env = { GIT_INDEX_FILE: index };
    await this.git(["read-tree", "HEAD"], { env });
    for (const [path, content] of [...this.#written].sort(([a], [b]) => a.localeCompare(b))) {
      const blob = (await this.git(["hash-object", "-w", "--stdin"], { input: content })).trim();
      const existing = (await this.git(["ls-tree", "HEAD", "--", path])).trim();
      const mode = /^(\d+) blob /.exec(existing)?.[1] ?? "100644";
      if (existing.includes(` ${blob}\t`)) continue;
      await this.git(["update-index", "--add", "--cacheinfo", `${mode},${blob},${path}`], { env });
      files.push({ path, content });
      if (existing === "") created.push(path);
    }
    const tree = (await this.git(["write-tree"], { env })).trim();
    const diffArgs = ["diff-tree", "-p", "--no-ext-diff", "--no-textconv", "--no-renames", "HEAD", tree];
    const diff = await this.git(diffArgs);
    await rm(index, { force: true });
    return {
      files,
      created,
      diff:
        diff.length > MAX_DIFF_BYTES
          ? `${diff.slice(0, MAX_DIFF_BYTES)}\n…[diff truncated by patchbay]`
          : diff,
    };
  }

  async dispose(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}

/** `tar -x` from stdin: GNU tar refuses members with `..` and strips leading `/`. */
function extract(archive: Buffer, dir: string, strip: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const gzip = archive[0] === 0x1f && archive[1] === 0x8b;
    const flags = ["--no-same-owner", "--no-same-permissions", "--delay-directory-restore"];
    const args = [gzip ? "-xzf" : "-xf", "-", "-C", dir, `--strip-components=${strip}`, ...flags];
    const child = spawn("tar", args, { stdio: ["pipe", "ignore", "pipe"], env: { PATH: "/usr/bin:/bin" } });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`tar failed (${code}): ${stderr.slice(0, 300)}`)),
    );
    child.stdin.end(archive);
  });
}
