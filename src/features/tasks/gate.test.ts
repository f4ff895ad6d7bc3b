import { randomUUID } from "node:crypto";
import { MockLanguageModelV3 } from "ai/test";
import { eq } from "drizzle-orm";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { echoTool } from "../../../test/lib/mcp-servers.ts";
import { readyTask } from "../../../test/lib/task-setup.ts";
import type { Deps } from "../../deps.ts";
import { isAppError } from "../../errors.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";
import { type SnapshotConnection, taskToolCalls } from "../../platform/db/schema/tasks.ts";
import { checkGate, openAttempt, type RunningTask } from "./gate.ts";

type Case = {
  /** What differs from the task's frozen view: the task's scope, the frozen connection, the live row. */
  task?: Partial<RunningTask>;
  frozen?: Partial<SnapshotConnection>;
  live?: Partial<typeof mcpConnections.$inferInsert>;
  /** The refusal's reason, or "pass". */
  verdict: string;
};

/**
 * Both sides of the gate on the same call: the plain read (`checkGate`, a task's first call) and
 * the statement that records the attempt (`openAttempt`, every call). Each rule is broken alone,
 * so dropping any one of them from either statement fails here; the combined cases pin which
 * refusal wins.
 */
describe("the call gate", () => {
  test.for<[string, Case]>([
    ["every rule holds", { verdict: "pass" }],
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
      "deleted wins over every other rule",
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

function refusedBecause(error: unknown, frozen: SnapshotConnection): string {
  if (!isAppError(error) || error.code !== "connection_changed") throw error;
  expect(error.details).toEqual({ connectionId: frozen.connectionId, nextAction: "start_new_task" });
  expect(error.message).toMatch(/start a new task to use its current configuration\.$/);
  return /\(([^)]*)\)/.exec(error.message)?.[1] ?? error.message;
}

const attempts = (deps: Deps, taskId: string) =>
  deps.db.select().from(taskToolCalls).where(eq(taskToolCalls.taskId, taskId));
