// Test and bench support: patchbay deps built by hand on a given database (as test/fixtures.ts
// builds them, without the job queue), and a task with one ready connection created through the
// in-process app — for code that runs the task runtime outside the vitest fixtures: a child
// process that is killed mid-call, and `bench:gate`.
import type { LanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { eq } from "drizzle-orm";
import { createApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { systemContext } from "../../src/context.ts";
import type { Deps } from "../../src/deps.ts";
import { bootstrapOrganization } from "../../src/features/organizations/bootstrap-organization.ts";
import type { RunningTask } from "../../src/features/tasks/gate.ts";
import { runTask } from "../../src/features/tasks/run-task.ts";
import type { DatabaseHandle } from "../../src/platform/db/client.ts";
import { tasks } from "../../src/platform/db/schema/tasks.ts";
import { createEgress } from "../../src/platform/egress/egress-fetch.ts";
import { createLogger } from "../../src/platform/logging/logger.ts";
import { paymentsUnavailable } from "../../src/platform/payments/payments.ts";
import { readPrices } from "../../src/platform/payments/prices.ts";
import { generateKek, parseKeyring } from "../../src/platform/vault/keyring.ts";
import { withServices } from "../../src/services.ts";
import { type Client, client } from "../http.ts";
import { devPolicy, type TestCa } from "./egress-servers.ts";

/**
 * Deps on `database` whose egress reaches loopback servers on `ports` presenting `ca`. No job
 * queue: nothing is enqueued or worked; tasks are run by calling the runtime directly.
 */
export function taskDeps(args: {
  database: DatabaseHandle;
  ca: TestCa;
  ports: number[];
  /** Default: a model that is never asked (`createTask` only checks that there is one). */
  languageModel?: LanguageModel;
}): Deps {
  const policy = devPolicy(args.ca, args.ports);
  return withServices({
    config: { ...loadConfig({ NODE_ENV: "test", PATCHBAY_DATA_DIR: "/nonexistent" }), egress: policy },
    db: args.database.db,
    database: args.database,
    logger: createLogger({ level: "warn", destination: process.stderr }),
    // A fresh key per process: these tasks' connections use no credential.
    keyring: parseKeyring(generateKek(1)),
    egress: createEgress(policy),
    languageModel: args.languageModel ?? new MockLanguageModelV3(),
    jobs: { send: async () => null, work: async () => {}, start: async () => {}, stop: async () => {} },
    clock: () => new Date(),
    payments: paymentsUnavailable("not used here", readPrices("")),
  });
}

export type ReadyConnection = {
  id: string;
  revision: number;
  approval: { manifestHash: string; tools: { name: string; access: string; attested: boolean }[] };
};

/**
 * A ready connection (alias `alias`, auth none, enabled) in `environmentId` to the MCP server at
 * `endpointUrl`, with every listed tool approved and `attestReadOnly` attested as read-only.
 */
export async function readyConnection(
  api: Client,
  environmentId: string,
  endpointUrl: string,
  opts: { alias?: string; attestReadOnly?: string[] } = {},
): Promise<{
  connection: ReadyConnection;
  discovery: { id: string; tools: { name: string; access: string }[] };
}> {
  const alias = opts.alias ?? "kb";
  const base = `/environments/${environmentId}/mcp-connections`;
  const created = await expectJson<ReadyConnection>(
    api.post(base, { alias, displayName: alias, endpointUrl, auth: { kind: "none" } }),
    201,
  );
  const discovery = await expectJson<{ id: string; tools: { name: string; access: string }[] }>(
    api.post(`${base}/${created.id}/discoveries`, undefined, { revision: created.revision }),
    201,
  );
  const approved = await expectJson<ReadyConnection>(
    api.post(
      `${base}/${created.id}/tool-approvals`,
      {
        discoveryId: discovery.id,
        toolNames: discovery.tools.map((t) => t.name),
        attestReadOnly: opts.attestReadOnly,
      },
      { revision: created.revision },
    ),
    200,
  );
  await expectJson(
    api.put(`${base}/${created.id}/enablement`, { enabled: true }, { revision: approved.revision }),
    200,
  );
  return { connection: approved, discovery };
}

/**
 * A fresh organisation with one ready connection (alias `alias`, auth none, every listed tool
 * approved, enabled) to the MCP server at `endpointUrl`, and a queued task that froze it.
 */
export async function readyTask(deps: Deps, endpointUrl: string, alias = "kb"): Promise<RunningTask> {
  const tenant = await bootstrapOrganization({ db: deps.db, input: {} });
  const api = client(createApp(deps), tenant.apiKey);
  await readyConnection(api, tenant.environmentId, endpointUrl, { alias });
  const view = await expectJson<{ id: string }>(
    api.post(`/environments/${tenant.environmentId}/tasks`, { instructions: "Investigate." }),
    201,
  );
  const [row] = await deps.db.select().from(tasks).where(eq(tasks.id, view.id)).limit(1);
  if (!row) throw new Error("the task was not stored");
  return {
    id: row.id,
    organizationId: row.organizationId,
    environmentId: row.environmentId,
    snapshot: row.snapshot,
  };
}

/** Runs a task as its job does: the system acting for the task's organisation. */
export function runAsJob(deps: Deps, task: { id: string; organizationId: string }) {
  const ctx = systemContext(deps, { name: "task", id: task.id, organizationId: task.organizationId });
  return runTask({ ctx, input: { taskId: task.id } });
}

/**
 * Marks a queued task `running`, as `runTask` does before its loop: for code that calls the
 * runtime's tools directly (a task's calls are gated on its task running).
 */
export async function markRunning(deps: Deps, taskId: string): Promise<void> {
  await deps.db.update(tasks).set({ status: "running", startedAt: deps.clock() }).where(eq(tasks.id, taskId));
}

async function expectJson<T>(pending: Promise<Response>, status: number): Promise<T> {
  const res = await pending;
  const text = await res.text();
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}
