#!/usr/bin/env node
// Runs the bundle in dist/ (built at install by scripts/build.ts), rebuilding it first when a
// source is newer; where that fails, runs the TypeScript sources directly (Node strips the
// types). docs/performance.md, "Start-up".
import { readFileSync } from "node:fs";

// `--version` alone is answered from package.json: neither the bundle's check nor its loading.
const only = process.argv.length === 3 ? process.argv[2] : undefined;
if (only === "--version" || only === "-V") {
  process.stdout.write(
    `${JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version}\n`,
  );
  process.exit(0);
}

const { enableCompileCache } = await import("node:module");
const { join } = await import("node:path");
const { bundleIsCurrent, root } = await import("./bundle-state.js");

// V8's compiled code for the bundle, kept between runs (node_modules/.cache is npm's convention).
enableCompileCache(join(root, "node_modules", ".cache", "patchbay-compile"));
// Stack traces name the bundle's chunks; `NODE_OPTIONS=--enable-source-maps` maps them to the
// sources (dist/ keeps the maps). Not by default: it costs ~0.2 s and ~100 MiB of a start.

const fromSource = "../src/transports/cli/main.ts";

async function entry() {
  if (process.env.PATCHBAY_FROM_SOURCE === "1") return fromSource;
  if (bundleIsCurrent()) return "../dist/cli.js";
  try {
    process.stderr.write("patchbay: a source changed since dist/ was built; rebuilding it…\n");
    await (await import("../scripts/build.ts")).buildBundle();
    return "../dist/cli.js";
  } catch (error) {
    process.stderr.write(`patchbay: could not rebuild dist/ (${error.message}); running the sources\n`);
    return fromSource;
  }
}

const { main } = await import(await entry());
await main(process.argv);
