// Bundles the CLI and the server into dist/ (docs/performance.md, "Start-up"). Run at install
// (`postinstall`) and by bin/patchbay.js when a source changed since; tests import src/ directly.
//
// Why a bundle: unbundled, a start resolves ~2,000 modules (~400 of them TypeScript, stripped at
// every start), and Node's package.json lookups, the ESM loader and the type stripper's own memory
// were most of the serving process's start-up time and a third of its peak memory.
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Plugin } from "esbuild";
import { root, sourcesVersion, stampPath } from "../bin/bundle-state.js";

const outdir = join(root, "dist");

/** Entry points: the bundle's name → its source. Modules that start a worker thread name its entry here. */
const entries: Record<string, string> = {
  cli: "src/transports/cli/main.ts",
  // The server on its own: `patchbay serve` loads it (through the CLI's dynamic import), and
  // bench:startup's code floor loads it without starting anything.
  server: "src/main.ts",
  "conversion-worker": "src/features/telemetry/conversion/conversion-worker.ts",
};

/**
 * Left to Node's own loader: packages that find files beside themselves at run time (PGlite's
 * WebAssembly and data, argon2's native addon, the dev chain's binary, pino's worker threads).
 */
const external = [
  "@electric-sql/pglite",
  "@node-rs/argon2",
  "@foundry-rs/anvil",
  "pino",
  "pino-pretty",
  "thread-stream",
];

/** Stands for the bundle's own `import.meta.url` while the source's are rewritten. */
const bundleUrl = "__patchbay_bundle_url__";

/**
 * Source files read files next to themselves (`new URL("./migrations", import.meta.url)`). In
 * the bundle, `import.meta.url` would be the chunk's; this rewrites it to the source file's own
 * location, relative to dist/, so those reads find what they found before. A URL that names
 * another entry point's source becomes that entry's bundle.
 */
const sourceLocations: Plugin = {
  name: "source-locations",
  setup(b) {
    const sources = join(root, "src");
    const entryBySource = new Map(Object.entries(entries).map(([name, src]) => [resolve(root, src), name]));
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(`${sources}/`)) return undefined;
      let contents = await readFile(args.path, "utf8");
      if (!contents.includes("import.meta.url")) return { contents, loader: "ts" };
      contents = contents.replace(
        /new URL\("(\.{1,2}\/[^"]+\.ts)", import\.meta\.url\)/g,
        (whole, rel: string) => {
          const entry = entryBySource.get(resolve(dirname(args.path), rel));
          return entry ? `new URL("./${entry}.js", ${bundleUrl})` : whole;
        },
      );
      const self = relative(outdir, args.path);
      contents = contents
        .replaceAll("import.meta.url", `new URL(${JSON.stringify(self)}, import.meta.url).href`)
        .replaceAll(bundleUrl, "import.meta.url");
      return { contents, loader: "ts" };
    });
  },
};

/**
 * Builds into a private directory, then renames each file into dist/ (chunks first, entries and
 * the stamp last), so a process starting meanwhile sees either the old bundle or the new one.
 * Chunks are named by content; ones no longer used are removed once an hour old (a process started
 * before this build may still load them).
 */
export async function buildBundle(): Promise<void> {
  const { build } = await import("esbuild");
  // Read before building: a source saved during the build leaves the stamp behind it.
  const version = sourcesVersion();
  const staging = join(outdir, `.staging-${process.pid}`);
  await rm(staging, { recursive: true, force: true });
  try {
    await build({
      entryPoints: Object.fromEntries(Object.entries(entries).map(([name, src]) => [name, join(root, src)])),
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "node",
      target: "node22",
      outdir: staging,
      chunkNames: "chunk-[hash]",
      sourcemap: "linked",
      minifyWhitespace: true,
      legalComments: "external",
      external,
      plugins: [sourceLocations],
      logLevel: "warning",
      // Bundled CommonJS modules call `require` for Node's built-ins.
      banner: {
        js: 'import { createRequire as __patchbayRequire } from "node:module"; const require = __patchbayRequire(import.meta.url);',
      },
    });
    const files = await readdir(staging);
    const entryFiles = new Set(Object.keys(entries).flatMap((name) => [`${name}.js`, `${name}.js.map`]));
    await mkdir(outdir, { recursive: true });
    for (const file of [
      ...files.filter((f) => !entryFiles.has(f)),
      ...files.filter((f) => entryFiles.has(f)),
    ]) {
      await rename(join(staging, file), join(outdir, file));
    }
    const stamp = join(staging, "build.json");
    await writeFile(stamp, JSON.stringify({ sourcesVersion: version }));
    await rename(stamp, stampPath);
    // Only chunks: dist/ also holds the PGlite template, which this build does not make.
    const current = new Set(files);
    const hourAgo = Date.now() - 60 * 60 * 1000;
    for (const file of await readdir(outdir)) {
      if (current.has(file) || !/^chunk-[A-Z0-9]+\.js(\.map|\.LEGAL\.txt)?$/.test(file)) continue;
      const path = join(outdir, file);
      if ((await stat(path)).mtimeMs < hourAgo) await rm(path, { force: true });
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Run by `npm install`: a failure here must not fail the install. Without a bundle
  // bin/patchbay.js rebuilds or runs the sources; without a template new databases run initdb.
  try {
    let started = performance.now();
    await buildBundle();
    process.stdout.write(`dist/: bundle built in ${Math.round(performance.now() - started)} ms\n`);
    const template = await import("../src/platform/db/pglite-template.ts");
    if (!template.hasMigratedTemplate()) {
      started = performance.now();
      await template.buildMigratedTemplate();
      process.stdout.write(
        `dist/: migrated PGlite template built in ${Math.round(performance.now() - started)} ms\n`,
      );
    }
  } catch (error) {
    process.stderr.write(
      `dist/ could not be built (${error instanceof Error ? error.message : String(error)}): patchbay runs from its sources, and starts slower\n`,
    );
  }
  // Without it, a data directory's first start with the dev chain compiles and deploys the token.
  try {
    const started = performance.now();
    const { prepareDevChain } = await import("../src/platform/payments/dev-chain.ts");
    if (await prepareDevChain()) {
      process.stdout.write(
        `dist/dev-chain/: dev chain prepared in ${Math.round(performance.now() - started)} ms\n`,
      );
    }
  } catch (error) {
    process.stderr.write(
      `dist/dev-chain/ could not be prepared (${error instanceof Error ? error.message : String(error)}): a first start compiles and deploys the dev chain's token\n`,
    );
  }
}
