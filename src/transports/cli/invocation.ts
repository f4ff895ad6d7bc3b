import { readFileSync, realpathSync } from "node:fs";
import { basename, delimiter, join } from "node:path";

const real = (path: string): string | undefined => {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
};

/**
 * How a person at this machine runs this installation's `patchbay` command, for the hints the
 * server prints (docs/decisions.md): `patchbay` when that name on PATH is this very installation
 * (a global install), `npx patchbay` from the directory of a clone or of a project that installed
 * it (npx runs the local one), else `node /abs/path/bin/patchbay.js`, which always works. Never a
 * bare `npx patchbay` elsewhere: npx would fetch whatever the registry calls `patchbay`.
 */
export function cliCommand(
  args: { argv1?: string | undefined; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): string {
  const { argv1 = process.argv[1], env = process.env, cwd = process.cwd() } = args;
  const bin = argv1 === undefined ? undefined : real(argv1);
  if (bin === undefined || basename(bin) !== "patchbay.js") return "npx patchbay";
  const onPath = (env.PATH ?? "").split(delimiter).filter((dir) => dir !== "");
  if (onPath.some((dir) => real(join(dir, "patchbay")) === bin)) return "patchbay";
  if (real(join(cwd, "node_modules", ".bin", "patchbay")) === bin) return "npx patchbay";
  if (isThisPackage(cwd) && real(join(cwd, "bin", "patchbay.js")) === bin) return "npx patchbay";
  return `node ${bin}`;
}

function isThisPackage(dir: string): boolean {
  try {
    const manifest: unknown = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    return (
      typeof manifest === "object" && manifest !== null && "name" in manifest && manifest.name === "patchbay"
    );
  } catch {
    return false;
  }
}
