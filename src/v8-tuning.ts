import { setFlagsFromString } from "node:v8";
import type { DatabaseTarget } from "./platform/db/client.ts";

/**
 * V8 settings for the serving process, applied once at start, before its heap has grown. V8
 * flags are process-wide: the conversion threads' heaps get them too.
 *
 * `--external-memory-accounted-in-global-limit`: count ArrayBuffer memory towards V8's global
 * heap limit instead of giving it a separate, small trigger of its own. An OTLP export passes
 * its body, the conversion thread's COPY bytes and postgres.js's framed copy of them through the
 * serving thread (~0.5 MiB per bench:ingest request, some of it copies its in-process client
 * makes), almost all of it dead within milliseconds. With V8's default that churn started a full
 * mark-compact of the serving thread's heap every 100–200 ms while the heap held ~31 MiB
 * (bench:ingest: 61–66 in 12 s; with the flag, 18–20). Measured on PostgreSQL
 * (docs/performance.md, "bench:ingest"): +16 % spans/s and −16 % CPU per span, peak RSS +90 MiB under
 * full load. Memory stays bounded: dead buffers still go with the young generation's
 * collections, and external memory still starts a full one at the global limit.
 *
 * Not with PGlite: its WebAssembly memory (hundreds of MiB, all live) counts towards the same
 * limit and raises it, so garbage is let grow further: bench:ingest's PGlite process peaked at
 * 1,587 MiB instead of 792, for no gain in speed. PGlite keeps V8's garbage-collection defaults
 * and gets `--wasm-num-compilation-tasks` instead (below).
 *
 * Set at run time rather than on the command line so `patchbay serve` gets it however it is
 * started. A V8 that does not know the flag prints an "unrecognized flag" message on stderr and
 * keeps its defaults.
 */
export function tuneV8ForServing(database: DatabaseTarget["kind"]): void {
  if (database === "pglite") {
    setFlagsFromString(`--wasm-num-compilation-tasks=${WASM_COMPILATION_TASKS}`);
    return;
  }
  setFlagsFromString("--external-memory-accounted-in-global-limit");
}

/**
 * `--wasm-num-compilation-tasks` with PGlite: V8 compiles PGlite's WebAssembly (PostgreSQL, ~10
 * MiB of code) and re-compiles its hot functions with TurboFan on background threads, as many at
 * once as it has tasks (128 by default). During a start those compilations run beside the main
 * thread, which is opening the database and loading the app, on a 2-core machine; each holds its
 * own compilation memory. One task at a time, measured with bench:startup's start on existing
 * data (three runs each, same hour): ready in 1.03–1.13 s instead of 1.19–1.32 s, peak RSS 617–742
 * MiB instead of 934–956, idle 404–411 MiB instead of 446–455. Tier-up still happens, later and
 * one function at a time; code, once compiled, is the same.
 */
const WASM_COMPILATION_TASKS = 1;
