import { lstat, realpath } from "node:fs/promises";
import { join, normalize, sep } from "node:path";
import { AppError } from "../../errors.ts";

/** Bounds on what the agent's file tools move. */
export const MAX_FILE_BYTES = 256 * 1024;

/**
 * A repository-relative path the agent gave, checked before any file system call: relative,
 * normalised, no `..`, nothing inside `.git`. Returns the canonical relative form (`a/b.js`).
 */
export function checkRelativePath(raw: string, opts: { allowRoot?: boolean } = {}): string {
  const bad = (why: string) => new AppError("invalid_request", `Path "${raw}" ${why}.`, { path: raw });
  if (raw.includes("\0")) throw bad("contains a NUL character");
  const trimmed = raw.replace(/^\.\/+/, "").replace(/\/+$/, "");
  if (trimmed === "" || trimmed === ".") {
    if (opts.allowRoot) return "";
    throw bad("names the repository root, not a file");
  }
  if (trimmed.startsWith("/")) throw bad("must be relative to the repository root");
  const segments = trimmed.split("/");
  if (segments.some((s) => s === ".." || s === "." || s === ""))
    throw bad("must not contain `.`, `..` or empty segments");
  if (segments[0] === ".git") throw bad("is inside .git");
  if (normalize(trimmed) !== trimmed) throw bad("is not normalised");
  return trimmed;
}

/**
 * The absolute location of a relative path under `root`, refusing one whose existing part
 * passes through a symbolic link that leads out of the root (a repository can ship such links).
 */
export async function resolveInside(root: string, relative: string): Promise<string> {
  const full = relative === "" ? root : join(root, relative);
  // Walk up to the deepest existing ancestor and check where it really is.
  let probe = full;
  for (;;) {
    try {
      await lstat(probe);
      break;
    } catch {
      const parent = probe.slice(0, probe.lastIndexOf(sep));
      if (parent.length < root.length) return full;
      probe = parent;
    }
  }
  const real = await realpath(probe);
  const realRoot = await realpath(root);
  if (real !== realRoot && !real.startsWith(`${realRoot}${sep}`)) {
    throw new AppError("invalid_request", `Path "${relative}" leads outside the repository.`, {
      path: relative,
    });
  }
  return full;
}
