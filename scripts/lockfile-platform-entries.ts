// The npm registry reachable here serves no Biome binaries for other platforms (404), so npm
// leaves them out of package-lock.json — and then `npm ci` refuses the lockfile ("Missing: …
// from lock file"). This adds platform-gated entries for such optional dependencies, inferred
// from their names (`cli-<os>-<cpu>[-musl]`, or Foundry's `anvil-<os>-amd64`); npm skips them on
// every other platform and never fetches them here. Linux entries are gated on libc only where the
// package also ships a `-musl` build (Biome); a single Linux build (anvil) serves both.
// Run after any `npm install` that rewrites the lockfile:
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
const platform = /-(android|darwin|linux|win32|freebsd)-(x64|amd64|arm64|ia32|arm)(-musl)?$/;
// Package names follow Go's spelling on some projects; npm's `cpu` field uses Node's.
const nodeCpu = (cpu: string) => (cpu === "amd64" ? "x64" : cpu);
let added = 0;
for (const entry of Object.values(lock.packages)) {
  const optional = entry.optionalDependencies ?? {};
  for (const [name, version] of Object.entries(optional)) {
    const target = `node_modules/${name}`;
    const match = platform.exec(name);
    if (lock.packages[target] || !match) continue;
    const hasMuslTwin = match[3] !== undefined || `${name}-musl` in optional;
    lock.packages[target] = {
      version,
      ...(entry.dev ? { dev: true } : {}),
      cpu: [nodeCpu(match[2] ?? "")],
      ...(match[1] === "linux" && hasMuslTwin ? { libc: [match[3] ? "musl" : "glibc"] } : {}),
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
