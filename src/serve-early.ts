import type { Config } from "./config.ts";
import { beginPglite, type PgliteOpening } from "./platform/db/pglite-open.ts";
import { tuneV8ForServing } from "./v8-tuning.ts";

/**
 * What `patchbay serve` does before it loads the server's code: V8's settings, then, with the
 * embedded database, PGlite started. PGlite then reads and compiles its WebAssembly (~10 MiB,
 * off the main thread) while the main thread loads and evaluates the bundle, instead of after
 * it (docs/performance.md, "Start-up").
 */
export function prepareToServe(config: Config): PgliteOpening | undefined {
  tuneV8ForServing(config.database.kind);
  return config.database.kind === "pglite" ? beginPglite(config.database) : undefined;
}
