// Whether dist/ holds a bundle of the current sources: plain JavaScript, so deciding costs a
// start neither the bundler nor Node's type stripper (which alone takes tens of MiB).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("..", import.meta.url));
export const stampPath = join(root, "dist", "build.json");

/** Besides src/: files whose change changes the bundle. */
const alsoBuiltFrom = ["package-lock.json", "package.json", "scripts/build.ts"];

/**
 * The newest modification time among the bundle's sources (about 400 stats, a few milliseconds).
 * @returns {number}
 */
export function sourcesVersion() {
  let newest = 0;
  // What the bundle is made of: TypeScript other than tests (migrations are read from src/). A
  // walk of plain readdirs with string paths: `path.join` and the recursive readdir each cost a
  // cold start several milliseconds more.
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) {
        const mtime = statSync(path).mtimeMs;
        if (mtime > newest) newest = mtime;
      }
    }
  };
  walk(join(root, "src"));
  for (const file of alsoBuiltFrom) newest = Math.max(newest, statSync(join(root, file)).mtimeMs);
  return newest;
}

/**
 * True when dist/ was built from the sources as they are now.
 * @returns {boolean}
 */
export function bundleIsCurrent() {
  try {
    return JSON.parse(readFileSync(stampPath, "utf8")).sourcesVersion === sourcesVersion();
  } catch {
    return false;
  }
}
