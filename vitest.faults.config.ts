import { defineConfig } from "vitest/config";

/**
 * `npm run test:faults`: the fault suite (test/faults/). Each file starts its own PostgreSQL
 * cluster and instances, and its scenarios run one after the other: they share those instances
 * and each leaves them recovered for the next.
 */
export default defineConfig({
  test: {
    include: ["test/faults/**/*.test.ts"],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    pool: "forks",
    maxWorkers: 1,
    fileParallelism: false,
  },
});
