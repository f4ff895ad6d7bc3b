import type { LanguageModel } from "ai";
import { and, eq } from "drizzle-orm";
import { describe, expect, newTenant, type Tenant, test } from "../../../test/fixtures.ts";
import { type Client, client } from "../../../test/http.ts";
import { connectMcp, ok } from "../../../test/lib/mcp-client.ts";
import { destructiveTool, echoTool, type McpTestServer } from "../../../test/lib/mcp-servers.ts";
import { createMemberKey } from "../../../test/lib/members.ts";
import { call, lastToolResults, scriptedModel, type Turn } from "../../../test/lib/scripted-model.ts";
import { readyConnection, runAsJob } from "../../../test/lib/task-setup.ts";
import { eventually } from "../../../test/lib/wait.ts";
import { signedInBrowser } from "../../../test/web.ts";
import { createApp } from "../../app.ts";
import type { Deps } from "../../deps.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";
import { requestCallApproval, useCallApproval } from "./call-approvals.ts";

type TaskView = {
  id: string;
  status: string;
  awaitingApproval: { callApprovalId: string; toolName: string } | null;
  nextStep: string | null;
};
type Approval = {
  id: string;
  state: string;
  arguments: Record<string, unknown>;
  decidedBy: string | null;
  url: string | null;
};
type Call = { outcome: string; errorCode: string | null; toolName: string; approvedBy: string | null };

async function json<T>(res: Response | Promise<Response>, status: number): Promise<T> {
  const r = await res;
  const text = await r.text();
  expect(r.status, text).toBe(status);
  return JSON.parse(text) as T;
}

const finish = (summary = "done"): Turn => call("finish", { summary });

const ready = async (api: Client, envId: string, server: McpTestServer, attestReadOnly?: string[]) => {
  const { connection, discovery } = await readyConnection(api, envId, server.url, {
    alias: "db",
    attestReadOnly,
  });
  return { conn: connection, discovery };
};

function setup(deps: Deps, owner: Tenant, model: LanguageModel) {
  const d: Deps = { ...deps, languageModel: model };
  const app = createApp(d);
  return { deps: d, app, api: client(app, owner.apiKey) };
}

const taskPath = (owner: Tenant, taskId: string) => `/environments/${owner.environmentId}/tasks/${taskId}`;

/** Starts a task and runs it in the background until its agent waits for a person. */
async function waitingTask(api: Client, deps: Deps, owner: Tenant) {
  const task = await json<TaskView>(
    api.post(`/environments/${owner.environmentId}/tasks`, { instructions: "Clean up." }),
    201,
  );
  const run = runAsJob(deps, { id: task.id, organizationId: owner.organizationId });
  const waiting = await eventually(async () => {
    const view = await json<TaskView>(api.get(taskPath(owner, task.id)), 200);
    return view.awaitingApproval ? view : undefined;
  }, 30_000);
  return { task, run, waiting };
}

const decide = (api: Client, owner: Tenant, taskId: string, id: string, decision: string) =>
  api.post(`${taskPath(owner, taskId)}/call-approvals/${id}/decision`, { decision });

describe("write calls wait for a person", () => {
  test("a destructive tool's call reaches the server only after an owner approves it, exactly once", async ({
    deps,
    owner,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [destructiveTool(), echoTool("status")] });
    const script = scriptedModel([
      call("db__drop_database", { text: "staging" }),
      (o) => finish(JSON.stringify(lastToolResults(o))),
    ]);
    const { deps: d, api, app } = setup(deps, owner, script.model);
    const { conn, discovery } = await ready(api, owner.environmentId, server);
    expect(discovery.tools.map((t) => [t.name, t.access]).sort()).toEqual([
      ["drop_database", "write"],
      ["status", "read"],
    ]);
    expect(conn.approval.tools).toEqual([
      { name: "drop_database", access: "write", attested: false },
      { name: "status", access: "read", attested: false },
    ]);

    const { task, run, waiting } = await waitingTask(api, d, owner);
    expect(waiting).toMatchObject({ status: "running", awaitingApproval: { toolName: "drop_database" } });
    expect(waiting.nextStep).toContain("call-approvals");
    const { items } = await json<{ items: Approval[] }>(
      api.get(`${taskPath(owner, task.id)}/call-approvals`),
      200,
    );
    expect(items).toEqual([
      expect.objectContaining({ state: "pending", arguments: { text: "staging" }, decidedBy: null }),
    ]);
    expect(items[0]?.url).toMatch(/\/call-approvals\/cap_[0-9a-z]+$/);
    expect(server.count("tools/call")).toBe(0);
    // The MCP server shows the pending call and where a person decides; it offers no way to approve.
    const mcpClient = await connectMcp(app, owner.apiKey);
    const listed = await ok<{ items: Approval[] }>(mcpClient, "list_task_call_approvals", {
      environmentId: owner.environmentId,
      taskId: task.id,
    });
    expect(listed.items).toEqual([
      expect.objectContaining({ id: items[0]?.id, state: "pending", url: items[0]?.url }),
    ]);
    const mcpTools = (await mcpClient.listTools()).tools.map((t) => t.name);
    expect(mcpTools.filter((name) => /approv/.test(name) && !/connection/.test(name))).toEqual([
      "list_task_call_approvals",
    ]);
    await mcpClient.close();

    const approved = await json<Approval>(decide(api, owner, task.id, items[0]?.id ?? "", "approve"), 200);
    expect(approved).toMatchObject({ state: "approved", decidedBy: owner.userId });
    expect(await run).toMatchObject({ status: "succeeded" });
    expect(server.count("tools/call", "drop_database")).toBe(1);

    const calls = await json<{ items: Call[] }>(api.get(`${taskPath(owner, task.id)}/tool-calls`), 200);
    expect(calls.items[0]).toMatchObject({
      toolName: "drop_database",
      outcome: "ok",
      approvedBy: owner.userId,
    });
    const after = await json<{ items: Approval[] }>(
      api.get(`${taskPath(owner, task.id)}/call-approvals`),
      200,
    );
    expect(after.items.map((a) => a.state)).toEqual(["used"]);
    // Decided once: a second decision is refused.
    expect((await decide(api, owner, task.id, approved.id, "approve")).status).toBe(409);
    const done = await json<TaskView>(api.get(taskPath(owner, task.id)), 200);
    expect(done).toMatchObject({ awaitingApproval: null, nextStep: null });
    const audit = await deps.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.targetId, task.id), eq(auditLog.action, "task.call_approved")));
    expect(audit).toHaveLength(1);
  });

  test("a rejection, a member, another organisation: nothing is sent, the agent is told", async ({
    deps,
    owner,
    mcp,
    app,
  }) => {
    const server = await mcp.start({ tools: [destructiveTool()] });
    const script = scriptedModel([
      call("db__drop_database", { text: "prod" }),
      (o) => {
        expect(lastToolResults(o).at(-1)?.output).toMatchObject({
          value: { outcome: "refused", error: "call_rejected" },
        });
        return finish();
      },
    ]);
    const { deps: d, api, app: modelApp } = setup(deps, owner, script.model);
    await ready(api, owner.environmentId, server);
    const { task, run, waiting } = await waitingTask(api, d, owner);
    const id = waiting.awaitingApproval?.callApprovalId ?? "";

    const member = await createMemberKey(d, modelApp, owner);
    expect((await decide(member, owner, task.id, id, "approve")).status).toBe(403);
    const stranger = client(app, (await newTenant(deps, app)).apiKey);
    expect((await decide(stranger, owner, task.id, id, "approve")).status).toBe(404);
    expect(server.count("tools/call")).toBe(0);

    // The owner decides in the browser, on the page the approval's url names.
    const browser = await signedInBrowser(modelApp, d, owner.userId);
    const page = await browser.page(`/call-approvals/${id}`);
    expect(page).toContain("drop_database");
    expect(page).toContain("&quot;text&quot;: &quot;prod&quot;");
    expect(page).toContain("Approve this call");
    // Anything but approve or reject is refused, and decides nothing.
    expect((await browser.post(`/call-approvals/${id}/decision`, { decision: "maybe" })).status).toBe(400);
    expect((await browser.post(`/call-approvals/${id}/decision`, { decision: "reject" })).status).toBe(303);
    expect(await browser.page(`/call-approvals/${id}`)).toContain("This approval is rejected");
    expect(await run).toMatchObject({ status: "succeeded" });
    expect(server.count("tools/call")).toBe(0);
    const calls = await json<{ items: Call[] }>(api.get(`${taskPath(owner, task.id)}/tool-calls`), 200);
    expect(calls.items[0]).toMatchObject({
      outcome: "refused",
      errorCode: "call_rejected",
      approvedBy: null,
    });
  });

  test("an approval nobody gives in time expires: the call is refused and cannot be approved later", async ({
    deps,
    owner,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [destructiveTool()] });
    let offsetMs = 0;
    const script = scriptedModel([
      call("db__drop_database", { text: "x" }),
      (o) => {
        expect(lastToolResults(o).at(-1)?.output).toMatchObject({
          value: { outcome: "refused", error: "approval_expired" },
        });
        return finish();
      },
    ]);
    const clocked: Deps = { ...deps, clock: () => new Date(Date.now() + offsetMs) };
    const { deps: d, api } = setup(clocked, owner, script.model);
    await ready(api, owner.environmentId, server);
    const task = await json<TaskView>(
      api.post(`/environments/${owner.environmentId}/tasks`, {
        instructions: "x",
        budgets: { maxDurationMs: 3_600_000 },
      }),
      201,
    );
    const run = runAsJob(d, { id: task.id, organizationId: owner.organizationId });
    const waiting = await eventually(async () => {
      const view = await json<TaskView>(api.get(taskPath(owner, task.id)), 200);
      return view.awaitingApproval ? view : undefined;
    }, 30_000);
    offsetMs = 16 * 60_000;
    expect(await run).toMatchObject({ status: "succeeded" });
    const id = waiting.awaitingApproval?.callApprovalId ?? "";
    expect((await decide(api, owner, task.id, id, "approve")).status).toBe(410);
    expect(server.count("tools/call")).toBe(0);
  });

  test("an approval is spent once, on exactly the call it names", async ({ deps, owner, mcp }) => {
    const server = await mcp.start({ tools: [destructiveTool()] });
    const { api } = setup(deps, owner, scriptedModel([]).model);
    await ready(api, owner.environmentId, server);
    const view = await json<TaskView>(
      api.post(`/environments/${owner.environmentId}/tasks`, { instructions: "x" }),
      201,
    );
    const [row] = await deps.db.select().from(tasks).where(eq(tasks.id, view.id));
    if (!row) throw new Error("no task");
    const frozen = row.snapshot.connections[0];
    const tool = row.snapshot.tools[0];
    if (!frozen || !tool) throw new Error("no snapshot tool");
    expect(tool.access).toBe("write");
    const pending = await requestCallApproval(deps, { task: row, frozen, tool, input: { text: "a" } });
    const use = (input: Record<string, unknown>, over: Partial<typeof frozen> = {}) =>
      useCallApproval(deps.db, {
        id: pending.id,
        taskId: row.id,
        frozen: { ...frozen, ...over },
        tool,
        input,
        now: new Date(),
      });
    expect(await use({ text: "a" })).toBeUndefined(); // not approved yet
    await json(decide(api, owner, row.id, pending.id, "approve"), 200);
    expect(await use({ text: "b" })).toBeUndefined(); // other arguments
    expect(await use({ text: "a" }, { revision: frozen.revision + 1 })).toBeUndefined(); // other revision
    expect(await use({ text: "a" })).toEqual({ decidedBy: owner.userId });
    expect(await use({ text: "a" })).toBeUndefined(); // used
  });

  test("an owner attests a tool as read: the agent calls it on its own, and the audit trail says who", async ({
    deps,
    owner,
    mcp,
  }) => {
    const server = await mcp.start({
      tools: [echoTool("run_query", { annotations: { readOnlyHint: false } })],
    });
    const script = scriptedModel([call("db__run_query", { text: "select 1" }), finish()]);
    const { deps: d, api } = setup(deps, owner, script.model);
    const { conn } = await ready(api, owner.environmentId, server, ["run_query"]);
    expect(conn.approval.tools).toEqual([{ name: "run_query", access: "read", attested: true }]);
    const task = await json<TaskView>(
      api.post(`/environments/${owner.environmentId}/tasks`, { instructions: "x" }),
      201,
    );
    expect(await runAsJob(d, { id: task.id, organizationId: owner.organizationId })).toMatchObject({
      status: "succeeded",
    });
    expect(server.count("tools/call", "run_query")).toBe(1);
    const [attested] = await deps.db
      .select()
      .from(auditLog)
      .where(
        and(eq(auditLog.targetId, conn.id), eq(auditLog.action, "mcp_connection.tools_attested_read_only")),
      );
    expect(attested).toMatchObject({
      actorId: expect.stringMatching(/^key_/),
      details: { toolNames: ["run_query"], manifestHash: conn.approval.manifestHash },
    });
  });

  test("attesting a tool that is not being approved is refused", async ({ owner, mcp }) => {
    const server = await mcp.start({ tools: [destructiveTool(), echoTool("status")] });
    const base = `/environments/${owner.environmentId}/mcp-connections`;
    const conn = await json<{ id: string }>(
      owner.api.post(base, {
        alias: "db",
        displayName: "Db",
        endpointUrl: server.url,
        auth: { kind: "none" },
      }),
      201,
    );
    const disc = await json<{ id: string }>(
      owner.api.post(`${base}/${conn.id}/discoveries`, undefined, { revision: 1 }),
      201,
    );
    const res = await owner.api.post(
      `${base}/${conn.id}/tool-approvals`,
      { discoveryId: disc.id, toolNames: ["status"], attestReadOnly: ["drop_database"] },
      { revision: 1 },
    );
    expect(res.status).toBe(400);
  });

  test("a server that flips a tool's readOnlyHint after approval: manifest_changed, nothing sent", async ({
    deps,
    owner,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [echoTool("lookup")] });
    const script = scriptedModel([
      call("db__lookup", { text: "a" }),
      (o) => {
        expect(lastToolResults(o).at(-1)?.output).toMatchObject({
          value: { outcome: "refused", error: "manifest_changed" },
        });
        return finish();
      },
    ]);
    const { deps: d, api } = setup(deps, owner, script.model);
    await ready(api, owner.environmentId, server);
    const task = await json<TaskView>(
      api.post(`/environments/${owner.environmentId}/tasks`, { instructions: "x" }),
      201,
    );
    server.setTools([echoTool("lookup", { annotations: { readOnlyHint: false, destructiveHint: true } })]);
    expect(await runAsJob(d, { id: task.id, organizationId: owner.organizationId })).toMatchObject({
      status: "succeeded",
    });
    expect(server.count("tools/call")).toBe(0);
  });
});
