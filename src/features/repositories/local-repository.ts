import { realpath, stat } from "node:fs/promises";
import { isAbsolute, normalize, sep } from "node:path";
import { AppError } from "../../errors.ts";
import { git, isValidBranchName } from "../../platform/git.ts";

/**
 * Checks a local-git registration: an absolute, normalised path (no `.`/`..` segments, no
 * trailing slash, no symlink anywhere on it — what is stored is what is opened), inside the
 * configured roots, naming the top level of a git work tree whose default branch exists.
 * Returns the path as stored.
 */
export async function checkLocalRepository(args: {
  path: string;
  defaultBranch: string;
  roots: string[] | undefined;
}): Promise<string> {
  const { path } = args;
  const bad = (message: string) => new AppError("invalid_repository_path", message, { path });
  if (path.includes("\0")) throw bad("The path contains a NUL character.");
  if (!isAbsolute(path)) throw bad("The path must be absolute.");
  if (path.split("/").some((segment) => segment === ".." || segment === ".")) {
    throw bad("The path must not contain `.` or `..` segments.");
  }
  if (normalize(path) !== path || (path.length > 1 && path.endsWith(sep))) {
    throw bad("The path must be normalised: no repeated or trailing slashes.");
  }
  if (args.roots && !args.roots.some((root) => path === root || path.startsWith(`${root}${sep}`))) {
    throw bad(
      `The path must lie inside one of the allowed roots (PATCHBAY_LOCAL_GIT_ROOTS): ${args.roots.join(", ")}.`,
    );
  }
  let real: string;
  try {
    real = await realpath(path);
    if (!(await stat(real)).isDirectory()) throw bad("The path is not a directory.");
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw bad("The path does not exist or cannot be read.");
  }
  if (real !== path)
    throw bad(`The path passes through a symbolic link (it resolves to ${real}); register ${real}.`);

  const invalid = (message: string) => new AppError("invalid_repository", message, { path });
  const top = await git(path, ["rev-parse", "--show-toplevel"]);
  if (top.code !== 0) throw invalid("The path is not inside a git work tree.");
  if (top.stdout.trim() !== path) {
    throw invalid(`The path is not the top level of its git work tree (${top.stdout.trim()}).`);
  }
  if (!(await isValidBranchName(args.defaultBranch))) {
    throw invalid(`"${args.defaultBranch}" is not a valid branch name.`);
  }
  const branch = await git(path, [
    "rev-parse",
    "--verify",
    "--quiet",
    `refs/heads/${args.defaultBranch}^{commit}`,
  ]);
  if (branch.code !== 0) throw invalid(`The repository has no branch "${args.defaultBranch}".`);
  return path;
}
