/**
 * `bench:gate` support: a patchbay with a task on a fresh PostgreSQL database, built the way
 * the crash test builds one (test/lib/task-setup.ts): deps by hand, a tenant from
 * `bootstrapOrganization`, and a ready connection (create → discover → approve → enable) and a
 * task through the in-process app. The task is never run: the bench only needs its row and its
 * frozen snapshot, and calls the runtime's verbs on them as `runTask` would.
 */
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import type { Deps } from "../../src/deps.ts";
import type { RunningTask } from "../../src/features/tasks/gate.ts";
import { type Db, openDatabase } from "../../src/platform/db/client.ts";
import { migrateDatabase } from "../../src/platform/db/migrate.ts";
import * as schema from "../../src/platform/db/schema/index.ts";
import type { SnapshotConnection, SnapshotTool } from "../../src/platform/db/schema/tasks.ts";
import type { TestCa } from "../../test/lib/egress-servers.ts";
import { markRunning, readyTask, taskDeps } from "../../test/lib/task-setup.ts";

export type GateBench = {
  deps: Deps;
  task: RunningTask;
  /** The snapshot's `echo` tool and its frozen connection. */
  tool: SnapshotTool;
  frozen: SnapshotConnection;
  /**
   * The same database through a pool whose sessions commit asynchronously
   * (`synchronous_commit = off`) — the what-if only; shipped code never does this.
   */
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
  const deps = taskDeps({ database, ca: args.ca, ports: [args.port] });
  const asyncCommit = postgres(args.databaseUrl, {
    max: 10,
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
    const task = await readyTask(deps, args.endpointUrl, "bench");
    // Its calls are made directly, not by `runTask`: mark it running as `runTask` would.
    await markRunning(deps, task.id);
    const tool = task.snapshot.tools.find((t) => t.toolName === "echo");
    const frozen = task.snapshot.connections.find((c) => c.connectionId === tool?.connectionId);
    if (!tool || !frozen) throw new Error("the task's snapshot has no echo tool");
    return { deps, task, tool, frozen, asyncCommitDb, close };
  } catch (error) {
    await close();
    throw error;
  }
}
