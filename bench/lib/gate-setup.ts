/**
 * `bench:gate` support: a patchbay with a running task on a fresh PostgreSQL database, built the
 * way the tests build one (test/fixtures.ts): deps by hand, a tenant from
 * `bootstrapOrganization`, and a ready connection (create → discover → approve → enable) and a
 * task through the in-process app. The task is never run: the bench only needs its row and its
 * frozen snapshot, and calls the runtime's verbs on them as `runTask` would.
 */
import { MockLanguageModelV3 } from "ai/test";
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { createApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { type Db, openDatabase } from "../../src/db/client.ts";
import { migrateDatabase } from "../../src/db/migrate.ts";
import * as schema from "../../src/db/schema/index.ts";
import type { SnapshotConnection, SnapshotTool } from "../../src/db/schema/tasks.ts";
import { tasks } from "../../src/db/schema/tasks.ts";
import type { Deps } from "../../src/deps.ts";
import { createEgress } from "../../src/features/egress/egress-fetch.ts";
import { devPolicy, type TestCa } from "../../src/features/egress/test-servers.ts";
import { bootstrapOrganization } from "../../src/features/organizations/bootstrap-organization.ts";
import type { RunningTask } from "../../src/features/tasks/call-snapshot-tool.ts";
import { generateKek, parseKeyring } from "../../src/features/vault/keyring.ts";
import { paymentsUnavailable } from "../../src/features/x402/payments.ts";
import { readPrices } from "../../src/features/x402/prices.ts";
import { createLogger } from "../../src/logger.ts";
import { client } from "../../test/http.ts";

export type GateBench = {
  deps: Deps;
  task: RunningTask;
  /** The snapshot's `echo` tool and its frozen connection. */
  tool: SnapshotTool;
  frozen: SnapshotConnection;
  /** The same database through a one-connection pool with `synchronous_commit = off` (what-if only). */
  asyncCommitDb: Db;
  close(): Promise<void>;
};

export async function setUpGateBench(args: {
  databaseUrl: string;
  ca: TestCa;
  port: number;
  endpointUrl: string;
}): Promise<GateBench> {
  const database = await openDatabase({ kind: "postgres", url: args.databaseUrl });
  await migrateDatabase(database);
  const policy = devPolicy(args.ca, [args.port]);
  const deps: Deps = {
    config: { ...loadConfig({ NODE_ENV: "test", PATCHBAY_DATA_DIR: "/nonexistent" }), egress: policy },
    db: database.db,
    database,
    logger: createLogger({ level: "warn", destination: process.stderr }),
    keyring: parseKeyring(generateKek(1)),
    egress: createEgress(policy),
    // Only `createTask` looks at it (it refuses without a model); the task is never run.
    languageModel: new MockLanguageModelV3(),
    // No worker: the task stays queued, and the bench calls its tools directly.
    jobs: { send: async () => null, work: async () => {}, start: async () => {}, stop: async () => {} },
    clock: () => new Date(),
    payments: paymentsUnavailable("not used by this bench", readPrices("")),
  };
  const asyncCommit = postgres(args.databaseUrl, {
    max: 1,
    onnotice: () => {},
    connection: { application_name: "patchbay-bench-async-commit", synchronous_commit: "off" },
  });
  const asyncCommitDb = drizzle(asyncCommit, { schema }) as unknown as Db;
  const close = async () => {
    await deps.egress.close();
    await asyncCommit.end({ timeout: 5 });
    await database.close();
  };
  try {
    const tenant = await bootstrapOrganization({ db: deps.db, input: {} });
    const api = client(createApp(deps), tenant.apiKey);
    const base = `/environments/${tenant.environmentId}/mcp-connections`;
    type Conn = { id: string; revision: number };
    const created = await expectJson<Conn>(
      api.post(base, {
        alias: "bench",
        displayName: "Bench",
        endpointUrl: args.endpointUrl,
        auth: { kind: "none" },
      }),
      201,
    );
    const discovery = await expectJson<{ id: string; tools: { name: string }[] }>(
      api.post(`${base}/${created.id}/discoveries`, undefined, { revision: created.revision }),
      201,
    );
    const approved = await expectJson<Conn>(
      api.post(
        `${base}/${created.id}/tool-approvals`,
        { discoveryId: discovery.id, toolNames: discovery.tools.map((t) => t.name) },
        { revision: created.revision },
      ),
      200,
    );
    await expectJson<Conn>(
      api.put(`${base}/${created.id}/enablement`, { enabled: true }, { revision: approved.revision }),
      200,
    );
    const view = await expectJson<{ id: string }>(
      api.post(`/environments/${tenant.environmentId}/tasks`, { instructions: "bench:gate" }),
      201,
    );
    const [row] = await deps.db.select().from(tasks).where(eq(tasks.id, view.id)).limit(1);
    const tool = row?.snapshot.tools.find((t) => t.toolName === "echo");
    const frozen = row?.snapshot.connections.find((c) => c.connectionId === tool?.connectionId);
    if (!row || !tool || !frozen) throw new Error("the task's snapshot has no echo tool");
    const task: RunningTask = {
      id: row.id,
      organizationId: row.organizationId,
      environmentId: row.environmentId,
      snapshot: row.snapshot,
    };
    return { deps, task, tool, frozen, asyncCommitDb, close };
  } catch (error) {
    await close();
    throw error;
  }
}

async function expectJson<T>(pending: Promise<Response>, status: number): Promise<T> {
  const res = await pending;
  const text = await res.text();
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}
