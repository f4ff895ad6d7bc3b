import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const tuning = fileURLToPath(new URL("./v8-tuning.ts", import.meta.url));

/**
 * The serving thread's pattern in miniature: half-MiB buffers that die within a few event-loop
 * turns, next to a small heap. Prints how many full (mark-compact) collections it took.
 */
const churn = (database: "postgres" | "pglite" | null) => `
  import { PerformanceObserver, constants } from "node:perf_hooks";
  ${database ? `import { tuneV8ForServing } from ${JSON.stringify(tuning)}; tuneV8ForServing("${database}");` : ""}
  let full = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if (entry.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) full++;
  }).observe({ entryTypes: ["gc"] });
  const live = [];
  for (let i = 0; i < 3000; i++) {
    live.push(Buffer.allocUnsafe(512 * 1024));
    if (live.length > 8) live.shift();
    await new Promise((resolve) => setImmediate(resolve));
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
  console.log(full);
`;

async function fullCollections(database: "postgres" | "pglite" | null): Promise<number> {
  const { stdout } = await run(process.execPath, ["--input-type=module", "--eval", churn(database)]);
  return Number(stdout.trim());
}

describe("tuneV8ForServing", () => {
  it("stops short-lived buffer memory from starting full collections by itself (PostgreSQL)", async () => {
    // One after the other: two churning processes at once disturb each other's GC timing.
    const untuned = await fullCollections(null);
    const tuned = await fullCollections("postgres");
    // 1500 MiB of churn: V8's default starts a full collection every ~70 MiB of it. With the flag
    // a quiet machine sees none; a loaded one (CI, both test lanes' forks busy) a few.
    expect(untuned).toBeGreaterThanOrEqual(8);
    expect(tuned).toBeLessThanOrEqual(Math.floor(untuned / 2));
  });

  it("keeps V8's garbage-collection defaults next to PGlite", async () => {
    const untuned = await fullCollections(null);
    const pglite = await fullCollections("pglite");
    expect(untuned).toBeGreaterThanOrEqual(8);
    expect(pglite).toBeGreaterThan(Math.floor(untuned / 2));
  });
});
