import { defineConfig } from "vitest/config";

/**
 * The PostgreSQL lane (`npm run test:pg`) skips files whose subject does not depend on the
 * database engine: the Chromium flows (the same pages are tested in process on both engines),
 * the example agent (the same journey runs in test/agent-journey.test.ts on both engines) and
 * the MCP conformance suite (protocol only), and the CLI's tests, whose server and data directory
 * are always embedded PGlite (they drop DATABASE_URL), so both lanes would run the very same thing;
 * likewise the installed bundle's test (its server is embedded PGlite too) and the V8 tuning test,
 * which only starts plain Node processes.
 * Both lanes together stay well under CI's budget.
 */
const engineIndependent = [
  "test/browser/**",
  "src/v8-tuning.test.ts",
  "test/bundle.test.ts",
  "test/example-agent.test.ts",
  "src/transports/mcp/conformance.test.ts",
  "src/transports/cli/**",
];

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // The fault suite has its own command (npm run test:faults) and config.
    exclude: [
      "**/node_modules/**",
      "test/faults/**",
      ...(process.env.PATCHBAY_TEST_PG ? engineIndependent : []),
    ],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Three forks on two cores: tests spend part of their time waiting (child processes, Chromium,
    // the dev chain), which a third fork fills. Measured on 2 cores: 312 s with two forks, 292 s
    // with three (docs/performance.md, "Test suite").
    pool: "forks",
    maxWorkers: 3,
    // The files of a fork share its module registry instead of importing the app afresh each:
    // importing took ~2 s per file (221 s of the PGlite lane's 500 s). Safe here because no test
    // mocks modules or stubs globals, and every file makes its own databases, servers and apps.
    isolate: false,
  },
});
