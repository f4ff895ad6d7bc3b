import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: one fork per core keeps PGlite instances from starving each other.
    pool: "forks",
    maxWorkers: 2,
  },
});
