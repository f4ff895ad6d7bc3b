import { randomUUID } from "node:crypto";
import { tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { eq } from "drizzle-orm";
import { z } from "zod";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { echoTool } from "../../../test/lib/mcp-servers.ts";
import { markRunning, readyTask } from "../../../test/lib/task-setup.ts";
import type { Deps } from "../../deps.ts";
import { isAppError } from "../../errors.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import { type SnapshotConnection, tasks, taskToolCalls } from "../../platform/db/schema/tasks.ts";
import { checkGate, openAttempt, type RunningTask } from "./gate.ts";
import { SessionPool } from "./session-pool.ts";
import { ownTools } from "./task-tools.ts";

type Case = {
  /**
   * What differs from the task's frozen view: the task's scope, its stored row (otherwise
   * `running`, as `runTask` leaves it), the frozen connection, the live row.
   */
  task?: Partial<RunningTask>;
  taskRow?: Partial<typeof tasks.$inferInsert>;
  frozen?: Partial<SnapshotConnection>;
  live?: Partial<typeof mcpConnections.$inferInsert>;
  /** The refusal's reason (`task_not_running` for the task rule), or "pass". */
  verdict: string;
};

/**
 * Both sides of the gate on the same call: the plain read (`checkGate`, a task's first call) and
 * the statement that records the attempt (`openAttempt`, every call). Each rule is broken alone,
 * so dropping any one of them from either statement fails here; the combined cases pin which
 * refusal wins: a stopped task's, then the connection rules in their order.
 */
describe("the call gate", () => {
  test.for<[string, Case]>([
    ["every rule holds", { verdict: "pass" }],
    [
      "the task's cancellation was requested",
      { taskRow: { cancelRequestedAt: new Date() }, verdict: "task_not_running" },
    ],
    ["the task has finished", { taskRow: { status: "succeeded" }, verdict: "task_not_running" }],
    [
      "the task was cancelled",
      { taskRow: { status: "cancelled", cancelRequestedAt: new Date() }, verdict: "task_not_running" },
    ],
    ["the task has not started", { taskRow: { status: "queued" }, verdict: "task_not_running" }],
    ["the task does not exist", { task: { id: "tsk_gone" }, verdict: "task_not_running" }],
    [
      "the task is in another environment",
      { task: { environmentId: randomUUID() }, verdict: "it was deleted" },
    ],
    [
      "the task is in another organisation",
      { task: { organizationId: "org_other" }, verdict: "it was deleted" },
    ],
    ["the connection does not exist", { frozen: { connectionId: "mcp_gone" }, verdict: "it was deleted" }],
    ["the connection is disabled", { live: { enabled: false }, verdict: "it was disabled" }],
    [
      "the approved manifest changed",
      { frozen: { manifestHash: "other" }, verdict: "its approved tools changed" },
    ],
    [
      "the approval was withdrawn",
      { live: { approvedManifestHash: null }, verdict: "its approved tools changed" },
    ],
    ["the revision changed", { frozen: { revision: 99 }, verdict: "its configuration changed" }],
    [
      "a stopped task wins over every connection rule",
      {
        taskRow: { cancelRequestedAt: new Date() },
        task: { environmentId: randomUUID() },
        live: { enabled: false },
        frozen: { manifestHash: "other", revision: 99 },
        verdict: "task_not_running",
      },
    ],
    [
      "deleted wins over every other connection rule",
      {
        task: { environmentId: randomUUID() },
        live: { enabled: false },
        frozen: { manifestHash: "other", revision: 99 },
        verdict: "it was deleted",
      },
    ],
    [
      "disabled wins over a changed manifest and revision",
      {
        live: { enabled: false },
        frozen: { manifestHash: "other", revision: 99 },
        verdict: "it was disabled",
      },
    ],
    [
      "a changed manifest wins over a changed revision",
      { frozen: { manifestHash: "other", revision: 99 }, verdict: "its approved tools changed" },
    ],
  ])("%s", async ([, c], { deps, mcp }) => {
    const server = await mcp.start({ tools: [echoTool("search")] });
    // Creating a task needs a configured model; this one is never asked.
    const ready = await readyTask({ ...deps, languageModel: new MockLanguageModelV3() }, server.url);
    const [tool] = ready.snapshot.tools;
    const [readyFrozen] = ready.snapshot.connections;
    if (!tool || !readyFrozen) throw new Error("the task froze no tool");
    await markRunning(deps, ready.id);
    if (c.taskRow) await deps.db.update(tasks).set(c.taskRow).where(eq(tasks.id, ready.id));
    if (c.live) {
      await deps.db.update(mcpConnections).set(c.live).where(eq(mcpConnections.id, readyFrozen.connectionId));
    }
    const task = { ...ready, ...c.task };
    const frozen = { ...readyFrozen, ...c.frozen };

    const read = await checkGate(deps.db, task, frozen).then(
      (live) => {
        expect(live).toMatchObject({ id: frozen.connectionId, endpointUrl: server.url });
        return "pass";
      },
      (error: unknown) => refusedBecause(error, frozen),
    );
    const attempt = await openAttempt(deps.db, { task, frozen, tool, startedAt: new Date() }).then(
      () => "pass",
      (error: unknown) => refusedBecause(error, frozen),
    );
    expect({ read, attempt }).toEqual({ read: c.verdict, attempt: c.verdict });
    const written = await attempts(deps, ready.id);
    if (c.verdict === "pass") {
      expect(written).toEqual([
        expect.objectContaining({
          modelToolName: tool.modelName,
          connectionRevision: frozen.revision,
          outcome: "ambiguous",
          durationMs: 0,
        }),
      ]);
    } else {
      expect(written).toEqual([]);
    }
    expect(server.count("tools/call")).toBe(0);
  });
});

/**
 * The runtime's own tools pass the task rule alone (`openOwnAttempt`): the same fragment as the
 * first of the customer rules above.
 */
describe("the gate of the runtime's own tools", () => {
  test.for<[string, Partial<typeof tasks.$inferInsert>, "ok" | "refused"]>([
    ["a running task is made and recorded", { status: "running" }, "ok"],
    [
      "a task whose cancellation was requested is refused and recorded",
      { cancelRequestedAt: new Date() },
      "refused",
    ],
    ["a finished task is refused and recorded", { status: "succeeded" }, "refused"],
  ])("a call of %s", async ([, taskRow, expected], { deps, mcp }) => {
    const server = await mcp.start({ tools: [echoTool("search")] });
    const task = await readyTask({ ...deps, languageModel: new MockLanguageModelV3() }, server.url);
    await markRunning(deps, task.id);
    await deps.db.update(tasks).set(taskRow).where(eq(tasks.id, task.id));
    let ran = 0;
    const sessions = new SessionPool(deps);
    const { finish } = ownTools(deps, task, sessions, {
      finish: tool({
        inputSchema: z.object({}),
        execute: async () => {
          ran += 1;
          return { ok: true };
        },
      }),
    });
    const output = await finish?.execute?.({}, { toolCallId: "call_1", messages: [] });
    await sessions.settle();

    const written = await attempts(deps, task.id);
    if (expected === "ok") {
      expect(output).toEqual({ ok: true });
      expect(ran).toBe(1);
      expect(written).toEqual([
        expect.objectContaining({ toolName: "finish", connectionId: null, outcome: "ok", errorCode: null }),
      ]);
    } else {
      expect(output).toEqual({
        outcome: "refused",
        error: "task_not_running",
        message: expect.stringMatching(/no longer running/),
      });
      expect(ran).toBe(0);
      expect(written).toEqual([
        expect.objectContaining({
          toolName: "finish",
          connectionId: null,
          connectionRevision: null,
          outcome: "refused",
          errorCode: "task_not_running",
        }),
      ]);
    }
  });
});

function refusedBecause(error: unknown, frozen: SnapshotConnection): string {
  if (isAppError(error) && error.code === "task_not_running") {
    expect(error.details).toBeUndefined();
    return error.code;
  }
  if (!isAppError(error) || error.code !== "connection_changed") throw error;
  expect(error.details).toEqual({ connectionId: frozen.connectionId, nextAction: "start_new_task" });
  expect(error.message).toMatch(/start a new task to use its current configuration\.$/);
  return /\(([^)]*)\)/.exec(error.message)?.[1] ?? error.message;
}

const attempts = (deps: Deps, taskId: string) =>
  deps.db.select().from(taskToolCalls).where(eq(taskToolCalls.taskId, taskId));
