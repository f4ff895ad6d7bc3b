import { Writable } from "node:stream";
import { test as base } from "vitest";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import type { Deps } from "../src/deps.ts";
import { createAuthCache } from "../src/features/api-keys/auth-cache.ts";
import { listenForAuthChanges } from "../src/features/api-keys/auth-changes.ts";
import {
  type BootstrapResult,
  bootstrapOrganization,
} from "../src/features/organizations/bootstrap-organization.ts";
import { jobQueues } from "../src/features/tasks/task-queue.ts";
import type { DatabaseHandle } from "../src/platform/db/client.ts";
import type { EgressPolicy } from "../src/platform/egress/address-policy.ts";
import { createEgress } from "../src/platform/egress/egress-fetch.ts";
import { createLogger } from "../src/platform/logging/logger.ts";
import { paymentsUnavailable } from "../src/platform/payments/payments.ts";
import { createJobs } from "../src/platform/queue/queue.ts";
import { generateKek, parseKeyring } from "../src/platform/vault/keyring.ts";
import { withServices } from "../src/services.ts";
import { createTestDatabase } from "./database.ts";
import { type Client, client } from "./http.ts";
import { devPolicy, makeTestCa, type TestCa } from "./lib/egress-servers.ts";
import { type McpServerOptions, type McpTestServer, startMcpServer } from "./lib/mcp-servers.ts";

export type Tenant = BootstrapResult & { api: Client };

/** The PostgreSQL URL behind a file's deps (test:pg lane), for tests that start a second job queue. */
export const databaseUrls = new WeakMap<Deps, string>();

/**
 * A job queue on a file's database as its deps get one: every queue declared, a 0.5 s poll. A test
 * that needs a second instance on the same database makes it here too:
 * `fileJobs(deps.database, databaseUrls.get(deps))`.
 */
export function fileJobs(database: DatabaseHandle, postgresUrl: string | undefined) {
  return createJobs({
    database,
    pglite: database.pglite,
    postgresUrl,
    logger: createLogger({ level: "silent" }),
    queues: jobQueues,
    pollingIntervalSeconds: 0.5,
  });
}

/** Every log line the app wrote during the file, for "no secret in logs" assertions. */
export type LogCapture = { chunks: string[]; text(): string };

type FileFixtures = {
  logs: LogCapture;
  /** Throwaway CA trusted by this file's egress; test MCP servers present its certificate. */
  testCa: TestCa;
  /**
   * The dev egress override in force for this file: loopback allowed, the test CA trusted.
   * Servers started by tests push their port onto `allowPorts` (it is read per request).
   */
  egressPolicy: EgressPolicy;
  deps: Deps;
  app: ReturnType<typeof createApp>;
};

type TestFixtures = {
  /** Starts real MCP servers (official SDK, HTTPS on loopback) reachable through this file's egress. */
  mcp: { start(options?: McpServerOptions): Promise<McpTestServer> };
  /** A fresh organisation (owner, `production` environment, all-permission owner key). */
  owner: Tenant;
  /** A second, unrelated organisation: its resources must be invisible to `owner` and back. */
  stranger: Tenant;
};

export async function newTenant(deps: Deps, app: FileFixtures["app"], email?: string): Promise<Tenant> {
  const result = await bootstrapOrganization({ db: deps.db, input: { email } });
  return { ...result, api: client(app, result.apiKey) };
}

export const test = base.extend<TestFixtures & FileFixtures>({
  logs: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest fixtures take their deps by destructuring
    async ({}, use) => {
      const chunks: string[] = [];
      await use({ chunks, text: () => chunks.join("") });
    },
    { scope: "file" },
  ],
  testCa: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest fixtures take their deps by destructuring
    async ({}, use) => use(await makeTestCa()),
    { scope: "file" },
  ],
  egressPolicy: [async ({ testCa }, use) => use(devPolicy(testCa, [])), { scope: "file" }],
  deps: [
    async ({ logs, egressPolicy }, use) => {
      const database = await createTestDatabase();
      const destination = new Writable({
        write(chunk, _enc, cb) {
          logs.chunks.push(String(chunk));
          cb();
        },
      });
      const config = {
        ...loadConfig({ NODE_ENV: "test", PATCHBAY_DATA_DIR: "/nonexistent" }),
        egress: egressPolicy,
      };
      const authCache = createAuthCache();
      const logger = createLogger({ level: "debug", destination });
      const deps = withServices({
        config,
        db: database.handle.db,
        database: database.handle,
        logger,
        keyring: parseKeyring(generateKek(1)),
        egress: createEgress(egressPolicy),
        languageModel: undefined,
        // The real queue on this file's database; no worker is registered unless a test does.
        jobs: fileJobs(database.handle, database.url),
        clock: () => new Date(),
        authCache,
        // Paid-route tests start their own chain (src/transports/x402/*.test.ts, src/platform/payments/*.test.ts).
        payments: paymentsUnavailable("no dev chain in tests", config.x402.prices),
      });
      if (database.url) databaseUrls.set(deps, database.url);
      await listenForAuthChanges(database.handle, authCache, deps.logger);
      await deps.jobs.start();
      await use(deps);
      await deps.jobs.stop({ timeoutMs: 5_000 });
      await deps.telemetry.close();
      await deps.egress.close();
      await database.drop();
    },
    { scope: "file" },
  ],
  app: [async ({ deps }, use) => use(createApp(deps)), { scope: "file" }],
  mcp: async ({ testCa, egressPolicy }, use) => {
    const started: McpTestServer[] = [];
    await use({
      async start(options = {}) {
        const server = await startMcpServer({ ca: testCa, ...options });
        egressPolicy.allowPorts.push(server.port);
        started.push(server);
        return server;
      },
    });
    await Promise.all(started.map((s) => s.close().catch(() => {})));
  },
  owner: async ({ deps, app }, use) => use(await newTenant(deps, app)),
  stranger: async ({ deps, app }, use) => use(await newTenant(deps, app)),
});

export { describe, expect } from "vitest";
