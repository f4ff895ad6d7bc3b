// The npm registry reachable here serves no Biome binaries for other platforms (404), so npm
// leaves them out of package-lock.json — and then `npm ci` refuses the lockfile ("Missing: …
// from lock file"). This adds platform-gated entries for such optional dependencies, inferred
// from their names (`cli-<os>-<cpu>[-musl]`); npm skips them on every other platform and never
// fetches them here. Run after any `npm install` that rewrites the lockfile:
//   node scripts/lockfile-platform-entries.ts
import { readFileSync, writeFileSync } from "node:fs";

type Entry = {
  version?: string;
  dev?: boolean;
  optionalDependencies?: Record<string, string>;
  [k: string]: unknown;
};

const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(file, "utf8")) as { packages: Record<string, Entry> };
const platform = /-(android|darwin|linux|win32|freebsd)-(x64|arm64|ia32|arm)(-musl)?$/;
let added = 0;
for (const entry of Object.values(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const target = `node_modules/${name}`;
    const match = platform.exec(name);
    if (lock.packages[target] || !match) continue;
    lock.packages[target] = {
      version,
      ...(entry.dev ? { dev: true } : {}),
      cpu: [match[2]],
      ...(match[1] === "linux" ? { libc: [match[3] ? "musl" : "glibc"] } : {}),
      optional: true,
      os: [match[1]],
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : 1)),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`added ${added} platform-gated lockfile entries\n`);
