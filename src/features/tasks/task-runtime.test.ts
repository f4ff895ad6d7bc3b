import type { LanguageModel } from "ai";
import { eq } from "drizzle-orm";
import { describe, expect, type Tenant, test } from "../../../test/fixtures.ts";
import { type Client, client, problem } from "../../../test/http.ts";
import { echoTool, type McpTestServer, slowTool, type TestTool } from "../../../test/lib/mcp-servers.ts";
import { call, lastToolResults, scriptedModel, type Turn } from "../../../test/lib/scripted-model.ts";
import { markRunning, runAsJob } from "../../../test/lib/task-setup.ts";
import { createApp } from "../../app.ts";
import type { Deps } from "../../deps.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";

type Conn = { id: string; revision: number };
type TaskView = {
  id: string;
  status: string;
  errorCode: string | null;
  summary: string | null;
  snapshot: { tools: { modelName: string }[] };
};
type Call = { outcome: string; errorCode: string | null; modelToolName: string; connectionRevision: number };

/** An API client whose app has the scripted model as its task agent's model. */
function withModel(deps: Deps, owner: Tenant, model: LanguageModel) {
  const modelDeps: Deps = { ...deps, languageModel: model };
  return { deps: modelDeps, api: client(createApp(modelDeps), owner.apiKey) };
}

async function json<T>(res: Response | Promise<Response>, status: number): Promise<T> {
  const r = await res;
  const text = await r.text();
  expect(r.status, text).toBe(status);
  return JSON.parse(text) as T;
}

/** A ready connection (auth none) exposing `approve` of the server's tools. */
async function ready(
  api: Client,
  envId: string,
  server: McpTestServer,
  alias: string,
  approve?: string[],
): Promise<Conn> {
  const base = `/environments/${envId}/mcp-connections`;
  let conn = await json<Conn>(
    api.post(base, { alias, displayName: alias, endpointUrl: server.url, auth: { kind: "none" } }),
    201,
  );
  const disc = await json<{ id: string; tools: { name: string }[] }>(
    api.post(`${base}/${conn.id}/discoveries`, undefined, { revision: 1 }),
    201,
  );
  conn = await json<Conn>(
    api.post(
      `${base}/${conn.id}/tool-approvals`,
      { discoveryId: disc.id, toolNames: approve ?? disc.tools.map((t) => t.name) },
      { revision: 1 },
    ),
    200,
  );
  return json<Conn>(
    api.put(`${base}/${conn.id}/enablement`, { enabled: true }, { revision: conn.revision }),
    200,
  );
}

const finish = (summary = "done"): Turn => call("finish", { summary });

async function start(
  api: Client,
  envId: string,
  instructions = "Investigate.",
  budgets?: Record<string, number>,
) {
  return json<TaskView>(
    api.post(`/environments/${envId}/tasks`, { instructions, ...(budgets ? { budgets } : {}) }),
    201,
  );
}

async function calls(api: Client, envId: string, taskId: string) {
  return (await json<{ items: Call[] }>(api.get(`/environments/${envId}/tasks/${taskId}/tool-calls`), 200))
    .items;
}

describe("task runtime", () => {
  test("a task freezes its environment's ready tools, calls once through the gate, records and finishes", async ({
    deps,
    owner,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [echoTool("search"), echoTool("hidden")] });
    const script = scriptedModel([
      call("runbooks__search", { text: "latency" }),
      (o) => finish(JSON.stringify(lastToolResults(o))),
    ]);
    const { deps: d, api } = withModel(deps, owner, script.model);
    await ready(api, owner.environmentId, server, "runbooks", ["search"]);

    const task = await start(api, owner.environmentId);
    expect(task.status).toBe("queued");
    expect(task.snapshot.tools.map((t) => t.modelName)).toEqual(["runbooks__search"]);
    expect(JSON.stringify(task)).not.toContain(server.url);

    const outcome = await runAsJob(d, { id: task.id, organizationId: owner.organizationId });
    expect(outcome).toMatchObject({ status: "succeeded" });
    expect(script.offeredTools(0).sort()).toEqual(["finish", "runbooks__search"]);
    expect(server.count("tools/call", "search")).toBe(1);
    expect(server.count("tools/call", "hidden")).toBe(0);

    const done = await json<TaskView & { usage: { steps: number } }>(
      api.get(`/environments/${owner.environmentId}/tasks/${task.id}`),
      200,
    );
    expect(done).toMatchObject({ status: "succeeded", usage: { steps: 2 } });
    expect(done.summary).toContain("latency");
    // The runtime's own `finish` is in the call record too, without a connection.
    expect(await calls(api, owner.environmentId, task.id)).toEqual([
      expect.objectContaining({ modelToolName: "runbooks__search", outcome: "ok", errorCode: null }),
      expect.objectContaining({
        modelToolName: "finish",
        connectionId: null,
        outcome: "ok",
        errorCode: null,
      }),
    ]);
    const transcript = await json<{ entries: { type: string }[] }>(
      api.get(`/environments/${owner.environmentId}/tasks/${task.id}/transcript`),
      200,
    );
    expect(transcript.entries.map((e) => e.type)).toEqual([
      "user",
      "tool_call",
      "tool_result",
      "tool_call",
      "tool_result",
    ]);
  });

  test.for<[string, (api: Client, base: string, c: Conn) => Promise<Response>]>([
    [
      "disabled",
      async (api: Client, base: string, c: Conn) =>
        api.put(`${base}/${c.id}/enablement`, { enabled: false }, { revision: c.revision }),
    ],
    [
      "renamed (revision bump)",
      async (api: Client, base: string, c: Conn) =>
        api.patch(`${base}/${c.id}`, { displayName: "Other" }, { revision: c.revision }),
    ],
    [
      "deleted",
      async (api: Client, base: string, c: Conn) => {
        await api.put(`${base}/${c.id}/enablement`, { enabled: false }, { revision: c.revision });
        const p = (await (
          await api.post(`${base}/${c.id}/deletion-previews`, undefined, { revision: c.revision + 1 })
        ).json()) as { receipt: string };
        return api.delete(`${base}/${c.id}`, {
          revision: c.revision + 1,
          headers: { "deletion-receipt": p.receipt },
        });
      },
    ],
  ])(
    "a connection %s after the task started fails the next call closed, before it reaches the server",
    async ([, change], { deps, owner, mcp }) => {
      const server = await mcp.start({ tools: [echoTool("search")] });
      const base = `/environments/${owner.environmentId}/mcp-connections`;
      let api: Client | undefined;
      let conn: Conn | undefined;
      const script = scriptedModel([
        call("kb__search"),
        async (o) => {
          expect(lastToolResults(o).at(-1)?.output).toMatchObject({ value: { outcome: "ok" } });
          // The owner changes the connection while the task is running.
          if (!api || !conn) throw new Error("not set up");
          expect((await change(api, base, conn)).status).toBeLessThan(300);
          return call("kb__search");
        },
        (o) => {
          expect(lastToolResults(o).at(-1)?.output).toMatchObject({
            value: { outcome: "refused", error: "connection_changed", nextAction: "start_new_task" },
          });
          return finish();
        },
      ]);
      const setup = withModel(deps, owner, script.model);
      api = setup.api;
      conn = await ready(api, owner.environmentId, server, "kb");
      const task = await start(api, owner.environmentId);
      expect(await runAsJob(setup.deps, { id: task.id, organizationId: owner.organizationId })).toMatchObject(
        { status: "succeeded" },
      );
      expect(server.count("tools/call", "search")).toBe(1);
      const record = await calls(api, owner.environmentId, task.id);
      expect(record.map((c) => [c.outcome, c.errorCode])).toEqual([
        ["ok", null],
        ["refused", "connection_changed"],
        ["ok", null],
      ]);
    },
  );

  test("a deletion preview counts the unfinished tasks whose snapshot holds the connection", async ({
    deps,
    owner,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [echoTool("search")] });
    const { api } = withModel(deps, owner, scriptedModel([]).model);
    const conn = await ready(api, owner.environmentId, server, "kb");
    const base = `/environments/${owner.environmentId}/mcp-connections/${conn.id}`;
    const before = await json<{ effects: { runningTasksAffected: number } }>(
      api.post(`${base}/deletion-previews`, undefined, { revision: conn.revision }),
      201,
    );
    expect(before.effects.runningTasksAffected).toBe(0);
    const task = await start(api, owner.environmentId);
    await start(api, owner.environmentId);
    const during = await json<{ effects: { runningTasksAffected: number } }>(
      api.post(`${base}/deletion-previews`, undefined, { revision: conn.revision }),
      201,
    );
    expect(during.effects.runningTasksAffected).toBe(2);
    await api.post(`/environments/${owner.environmentId}/tasks/${task.id}/cancellation`);
    const after = await json<{ effects: { runningTasksAffected: number } }>(
      api.post(`${base}/deletion-previews`, undefined, { revision: conn.revision }),
      201,
    );
    expect(after.effects.runningTasksAffected).toBe(1);
  });

  test("a connection enabled after the task started is absent from it and present in the next", async ({
    deps,
    owner,
    mcp,
  }) => {
    const a = await mcp.start({ tools: [echoTool("one")] });
    const b = await mcp.start({ tools: [echoTool("two", { description: undefined })] });
    const script = scriptedModel([finish(), finish()]);
    const { deps: d, api } = withModel(deps, owner, script.model);
    await ready(api, owner.environmentId, a, "a");
    const first = await start(api, owner.environmentId);
    await ready(api, owner.environmentId, b, "b");
    await runAsJob(d, { id: first.id, organizationId: owner.organizationId });
    expect(script.offeredTools(0).sort()).toEqual(["a__one", "finish"]);
    const second = await start(api, owner.environmentId);
    await runAsJob(d, { id: second.id, organizationId: owner.organizationId });
    expect(script.offeredTools(1).sort()).toEqual(["a__one", "b__two", "finish"]);
    // The list reads only the part of each snapshot it shows: it shows each task exactly as the
    // task's own read does (a tool without a description has none in either).
    const path = `/environments/${owner.environmentId}/tasks`;
    const list = await json<{ items: TaskView[] }>(api.get(path), 200);
    expect(list.items).toEqual([
      await json<TaskView>(api.get(`${path}/${first.id}`), 200),
      await json<TaskView>(api.get(`${path}/${second.id}`), 200),
    ]);
    const tools = (list.items[1] as unknown as { snapshot: { tools: Record<string, unknown>[] } }).snapshot
      .tools;
    expect(tools.map((t) => [t.toolName, "description" in t])).toEqual([
      ["one", true],
      ["two", false],
    ]);
    // The view is kept by PostgreSQL (task_snapshot_view): exactly the snapshot without schemas.
    const rows = await deps.db.select().from(tasks).where(eq(tasks.environmentId, owner.environmentId));
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.snapshotView).toEqual({
        takenAt: row.snapshot.takenAt,
        connections: row.snapshot.connections,
        tools: row.snapshot.tools.map(({ modelName, connectionId, toolName, description }) => ({
          modelName,
          connectionId,
          toolName,
          ...(description !== undefined ? { description } : {}),
        })),
      });
    }
  });

  test("environment isolation: a task never sees another environment's connections", async ({
    deps,
    owner,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [echoTool("secret_tool")] });
    const script = scriptedModel([finish()]);
    const { deps: d, api } = withModel(deps, owner, script.model);
    const staging = await json<{ id: string }>(api.post("/environments", { name: "staging" }), 201);
    await ready(api, staging.id, server, "stg");
    const task = await start(api, owner.environmentId);
    expect(task.snapshot.tools).toEqual([]);
    await runAsJob(d, { id: task.id, organizationId: owner.organizationId });
    expect(script.offeredTools(0)).toEqual(["finish"]);
  });

  test.for<[string, (s: McpTestServer) => void]>([
    ["renamed", (s) => s.setTools([echoTool("search_v2")])],
    ["removed", (s) => s.setTools([echoTool("other")])],
    ["edited", (s) => s.setTools([echoTool("search", { description: "Now deletes things." })])],
  ])(
    "drift: the server %s an approved tool → manifest_changed for every call of that task",
    async ([, drift], { deps, owner, mcp }) => {
      const server = await mcp.start({ tools: [echoTool("search"), echoTool("other")] });
      const script = scriptedModel([call("kb__search"), call("kb__other"), finish()]);
      const { deps: d, api } = withModel(deps, owner, script.model);
      await ready(api, owner.environmentId, server, "kb");
      const task = await start(api, owner.environmentId);
      drift(server);
      await runAsJob(d, { id: task.id, organizationId: owner.organizationId });
      expect(server.count("tools/call")).toBe(0);
      const record = await calls(api, owner.environmentId, task.id);
      expect(record.map((c) => [c.outcome, c.errorCode])).toEqual([
        ["refused", "manifest_changed"],
        ["refused", "manifest_changed"],
        ["ok", null],
      ]);
    },
  );

  test("a call past its timeout is ambiguous, recorded, and sent exactly once", async ({
    deps,
    owner,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [slowTool(5_000, "slow")] });
    const script = scriptedModel([call("kb__slow"), finish()]);
    const { deps: d, api } = withModel(deps, owner, script.model);
    await ready(api, owner.environmentId, server, "kb");
    const task = await start(api, owner.environmentId);
    const { callSnapshotTool } = await import("./call-snapshot-tool.ts");
    const { SessionPool } = await import("./session-pool.ts");
    // Called directly, not by `runTask`: running, as `runTask` would mark it.
    await markRunning(d, task.id);
    const [row] = await d.db.select().from(tasks).where(eq(tasks.id, task.id));
    if (!row) throw new Error("task missing");
    const sessions = new SessionPool(d);
    const tool = row.snapshot.tools[0];
    if (!tool) throw new Error("no tool");
    const output = await callSnapshotTool({
      deps: d,
      task: row,
      tool,
      input: {},
      sessions,
      timeoutMs: 1_000,
    });
    await sessions.closeAll();
    expect(output).toMatchObject({ outcome: "ambiguous", error: "remote_timeout" });
    expect(server.count("tools/call", "slow")).toBe(1);
    expect(await calls(api, owner.environmentId, task.id)).toEqual([
      expect.objectContaining({ outcome: "ambiguous", errorCode: "remote_timeout" }),
    ]);
  });

  test("a server killed mid-call makes the call ambiguous; it is not retried", async ({
    deps,
    owner,
    mcp,
  }) => {
    let server: McpTestServer | undefined;
    const dying: TestTool = {
      definition: {
        name: "dying",
        description: "Crashes the server.",
        inputSchema: { type: "object" },
        annotations: { readOnlyHint: true },
      },
      handler: async () => {
        setTimeout(() => void server?.kill(), 50);
        await new Promise((r) => setTimeout(r, 2_000));
        return { content: [{ type: "text", text: "never" }] };
      },
    };
    server = await mcp.start({ tools: [dying] });
    const script = scriptedModel([call("kb__dying"), finish()]);
    const { deps: d, api } = withModel(deps, owner, script.model);
    await ready(api, owner.environmentId, server, "kb");
    const task = await start(api, owner.environmentId);
    await runAsJob(d, { id: task.id, organizationId: owner.organizationId });
    expect(server.count("tools/call", "dying")).toBe(1);
    expect((await calls(api, owner.environmentId, task.id)).map((c) => c.outcome)).toEqual([
      "ambiguous",
      "ok",
    ]);
  });

  test("results past 64 KiB are truncated with a marker; structured content is checked against the approved schema", async ({
    deps,
    owner,
    mcp,
  }) => {
    const big: TestTool = {
      definition: {
        name: "big",
        description: "Large answer.",
        inputSchema: { type: "object" },
        annotations: { readOnlyHint: true },
      },
      handler: () => ({ content: [{ type: "text", text: "x".repeat(200_000) }] }),
    };
    const typed: TestTool = {
      definition: {
        name: "typed",
        description: "Typed answer.",
        inputSchema: { type: "object" },
        annotations: { readOnlyHint: true },
        outputSchema: { type: "object", properties: { count: { type: "number" } }, required: ["count"] },
      },
      handler: () => ({ content: [{ type: "text", text: "{}" }], structuredContent: { count: "many" } }),
    };
    const server = await mcp.start({ tools: [big, typed] });
    const seen: unknown[] = [];
    const script = scriptedModel([
      call("kb__big"),
      (o) => {
        seen.push(lastToolResults(o).at(-1)?.output);
        return call("kb__typed");
      },
      (o) => {
        seen.push(lastToolResults(o).at(-1)?.output);
        return finish();
      },
    ]);
    const { deps: d, api } = withModel(deps, owner, script.model);
    await ready(api, owner.environmentId, server, "kb");
    const task = await start(api, owner.environmentId);
    await runAsJob(d, { id: task.id, organizationId: owner.organizationId });
    const first = JSON.stringify(seen[0]);
    expect(first.length).toBeLessThan(70_000);
    expect(first).toContain("truncated by patchbay");
    expect(seen[1]).toMatchObject({ value: { outcome: "error", error: "invalid_tool_result" } });
  });

  test("budgets: a task that keeps calling past its step budget fails with budget_exhausted", async ({
    deps,
    owner,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [echoTool("loop")] });
    const script = scriptedModel(Array.from({ length: 5 }, () => call("kb__loop")));
    const { deps: d, api } = withModel(deps, owner, script.model);
    await ready(api, owner.environmentId, server, "kb");
    const task = await start(api, owner.environmentId, "Loop.", { maxSteps: 3 });
    expect(await runAsJob(d, { id: task.id, organizationId: owner.organizationId })).toMatchObject({
      status: "failed",
      errorCode: "budget_exhausted",
    });
    expect(server.count("tools/call", "loop")).toBe(3);
  });

  test("budgets: tokens past the budget stop the task after that step with budget_exhausted", async ({
    deps,
    owner,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [echoTool("loop")] });
    // Each scripted turn reports 120 tokens: the ninth crosses 1,000.
    const script = scriptedModel(Array.from({ length: 15 }, () => call("kb__loop")));
    const { deps: d, api } = withModel(deps, owner, script.model);
    await ready(api, owner.environmentId, server, "kb");
    const task = await start(api, owner.environmentId, "Loop.", { maxTokens: 1_000, maxSteps: 50 });
    const outcome = await runAsJob(d, { id: task.id, organizationId: owner.organizationId });
    expect(outcome).toMatchObject({ status: "failed", errorCode: "budget_exhausted" });
    const view = await json<TaskView & { errorMessage: string; usage: { inputTokens: number } }>(
      api.get(`/environments/${owner.environmentId}/tasks/${task.id}`),
      200,
    );
    expect(view.errorMessage).toContain("Token budget of 1000 exhausted");
    expect(script.calls).toHaveLength(9);
    expect(server.count("tools/call", "loop")).toBe(9);
  });

  test("budgets: a task still thinking when its time runs out fails with budget_exhausted", async ({
    deps,
    owner,
  }) => {
    const script = scriptedModel([
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        return call("finish", { summary: "too late" });
      },
      finish(),
    ]);
    const { deps: d, api } = withModel(deps, owner, script.model);
    const task = await start(api, owner.environmentId, "Think slowly.", { maxDurationMs: 1_000 });
    const outcome = await runAsJob(d, { id: task.id, organizationId: owner.organizationId });
    expect(outcome).toMatchObject({ status: "failed", errorCode: "budget_exhausted" });
    const view = await json<TaskView & { errorMessage: string }>(
      api.get(`/environments/${owner.environmentId}/tasks/${task.id}`),
      200,
    );
    expect(view.errorMessage).toContain("Time budget of 1000 ms exhausted");
  });

  test("a stopped run makes no more calls, even when its model still answers with one", async ({
    deps,
    owner,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [echoTool("search")] });
    // A model that ignores the abort: its answer comes after the time budget ran out.
    const script = scriptedModel([
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        return call("kb__search", { text: "late" });
      },
      finish(),
    ]);
    const { deps: d, api } = withModel(deps, owner, script.model);
    await ready(api, owner.environmentId, server, "kb");
    const task = await start(api, owner.environmentId, "Think slowly.", { maxDurationMs: 1_000 });
    expect(await runAsJob(d, { id: task.id, organizationId: owner.organizationId })).toMatchObject({
      status: "failed",
      errorCode: "budget_exhausted",
    });
    expect(server.count("tools/call")).toBe(0);
    expect(await calls(api, owner.environmentId, task.id)).toEqual([]);
  });

  test("cancel: a running task makes no call once asked to stop, and ends after its current step", async ({
    deps,
    owner,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [echoTool("loop")] });
    let api: Client | undefined;
    let taskId = "";
    const script = scriptedModel([
      async () => {
        // The owner cancels while the model is mid-step.
        const res = await api?.post(`/environments/${owner.environmentId}/tasks/${taskId}/cancellation`);
        expect(res?.status).toBe(200);
        return call("kb__loop");
      },
      call("kb__loop"),
      finish(),
    ]);
    const setup = withModel(deps, owner, script.model);
    api = setup.api;
    await ready(api, owner.environmentId, server, "kb");
    const task = await start(api, owner.environmentId, "Loop until told to stop.");
    taskId = task.id;
    expect(await runAsJob(setup.deps, { id: task.id, organizationId: owner.organizationId })).toMatchObject({
      status: "cancelled",
    });
    expect(script.calls).toHaveLength(1);
    // The step's call came after the cancellation: the gate refused it, and it is recorded.
    expect(server.count("tools/call", "loop")).toBe(0);
    expect((await calls(api, owner.environmentId, task.id)).map((c) => [c.outcome, c.errorCode])).toEqual([
      ["refused", "task_not_running"],
    ]);
    const view = await json<TaskView>(api.get(`/environments/${owner.environmentId}/tasks/${task.id}`), 200);
    expect(view.status).toBe("cancelled");
  });

  test("without a configured model nothing is created: 503 model_not_configured", async ({ owner }) => {
    const res = await owner.api.post(`/environments/${owner.environmentId}/tasks`, { instructions: "x" });
    expect(res.status).toBe(503);
    expect((await problem(res)).code).toBe("model_not_configured");
    const list = await json<{ items: unknown[] }>(
      owner.api.get(`/environments/${owner.environmentId}/tasks`),
      200,
    );
    expect(list.items).toEqual([]);
  });

  test("a snapshot over its bound is refused clearly at task start", async ({ deps, owner, mcp }) => {
    const fat = (i: number): TestTool =>
      echoTool(`fat${i}`, {
        inputSchema: {
          type: "object",
          properties: { q: { type: "string", description: "d".repeat(30_000) } },
        },
      });
    const server = await mcp.start({ tools: Array.from({ length: 10 }, (_, i) => fat(i)) });
    const { api } = withModel(deps, owner, scriptedModel([]).model);
    await ready(api, owner.environmentId, server, "fat");
    const res = await api.post(`/environments/${owner.environmentId}/tasks`, { instructions: "x" });
    expect(res.status).toBe(422);
    expect(await problem(res)).toMatchObject({ code: "snapshot_limit_exceeded", limit: 262_144 });
  });

  test("cancel: a queued task is cancelled at once; a finished one is 409", async ({ deps, owner }) => {
    const script = scriptedModel([finish()]);
    const { deps: d, api } = withModel(deps, owner, script.model);
    const a = await start(api, owner.environmentId);
    const cancelled = await json<TaskView>(
      api.post(`/environments/${owner.environmentId}/tasks/${a.id}/cancellation`),
      200,
    );
    expect(cancelled.status).toBe("cancelled");
    expect(await runAsJob(d, { id: a.id, organizationId: owner.organizationId })).toBeUndefined();
    const b = await start(api, owner.environmentId);
    await runAsJob(d, { id: b.id, organizationId: owner.organizationId });
    const again = await api.post(`/environments/${owner.environmentId}/tasks/${b.id}/cancellation`);
    expect((await problem(again)).code).toBe("task_not_cancellable");
  });

  test("tasks are tenant-scoped: another organisation gets 404", async ({ deps, owner, stranger }) => {
    const { api } = withModel(deps, owner, scriptedModel([]).model);
    const task = await start(api, owner.environmentId);
    expect((await stranger.api.get(`/environments/${owner.environmentId}/tasks/${task.id}`)).status).toBe(
      404,
    );
    expect((await stranger.api.get(`/environments/${stranger.environmentId}/tasks/${task.id}`)).status).toBe(
      404,
    );
  });
});
