import { MockLanguageModelV3 } from "ai/test";
import { eq } from "drizzle-orm";
import { describe, expect, type Tenant, test } from "../../../test/fixtures.ts";
import { client } from "../../../test/http.ts";
import { echoTool } from "../../../test/lib/mcp-servers.ts";
import { markRunning, readyConnection } from "../../../test/lib/task-setup.ts";
import { createApp } from "../../app.ts";
import type { Deps } from "../../deps.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";
import { webhookDeliveries } from "../../platform/db/schema/webhooks.ts";
import { callSnapshotTool } from "../tasks/call-snapshot-tool.ts";
import { SessionPool } from "../tasks/session-pool.ts";
import type { Connection } from "./schemas.ts";

async function json<T>(res: Response | Promise<Response>, status: number): Promise<T> {
  const r = await res;
  const text = await r.text();
  expect(r.status, text).toBe(status);
  return JSON.parse(text) as T;
}

/** A running task of `owner` that froze its one ready connection; calls its first tool `n` times. */
async function runningTask(deps: Deps, owner: Tenant) {
  const d: Deps = { ...deps, languageModel: new MockLanguageModelV3() };
  const api = client(createApp(d), owner.apiKey);
  const view = await json<{ id: string }>(
    api.post(`/environments/${owner.environmentId}/tasks`, { instructions: "Investigate." }),
    201,
  );
  await markRunning(d, view.id);
  const [row] = await d.db.select().from(tasks).where(eq(tasks.id, view.id));
  if (!row) throw new Error("task missing");
  const tool = row.snapshot.tools[0];
  if (!tool) throw new Error("no tool");
  return {
    async call(times = 1) {
      // A fresh pool per round: the first call opens the session, as a new step run would.
      const sessions = new SessionPool(d);
      const outputs = [];
      for (let i = 0; i < times; i++) {
        outputs.push(await callSnapshotTool({ deps: d, task: row, tool, input: {}, sessions }));
      }
      await sessions.closeAll();
      return outputs;
    },
  };
}

describe("connection health", () => {
  test("successes, failures and the credential-rejected condition are kept on the connection; readiness does not move", async ({
    deps,
    owner,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [echoTool("lookup")] });
    const { connection } = await readyConnection(owner.api, owner.environmentId, server.url);
    const url = `/environments/${owner.environmentId}/mcp-connections/${connection.id}`;
    const fresh = await json<Connection>(owner.api.get(url), 200);
    expect(fresh.health).toEqual({
      lastSuccessAt: null,
      lastFailureAt: null,
      lastFailureCode: null,
      consecutiveFailures: 0,
      credentialRejected: false,
      credentialRejectedAt: null,
    });

    const task = await runningTask(deps, owner);
    expect(await task.call()).toMatchObject([{ outcome: "ok" }]);
    const ok = await json<Connection>(owner.api.get(url), 200);
    expect(ok.health.lastSuccessAt).not.toBeNull();
    expect(ok.health.consecutiveFailures).toBe(0);

    // Subscribed: the condition's start goes to the outbox once, not once per failure.
    await json(
      owner.api.post(`/organizations/${owner.organizationId}/webhook-endpoints`, {
        url: "https://hooks.example.com/patchbay",
        eventTypes: ["connection.credential_rejected"],
      }),
      201,
    );
    const outbox = () =>
      deps.db
        .select()
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.organizationId, owner.organizationId));

    // The remote now refuses every request: the open session's calls fail with 401.
    server.setAuth({ kind: "bearer", token: "only-this" }, 401);
    const failed = await task.call(2);
    expect(failed.map((o) => o.error)).toEqual(["remote_auth_failed", "remote_auth_failed"]);
    const rejected = await json<Connection>(owner.api.get(url), 200);
    expect(rejected.health).toMatchObject({
      lastFailureCode: "remote_auth_failed",
      consecutiveFailures: 2,
      credentialRejected: true,
      lastSuccessAt: ok.health.lastSuccessAt,
    });
    expect(rejected.readiness).toBe("ready");
    const events = await outbox();
    expect(events).toHaveLength(1);
    expect(events[0]?.payload).toMatchObject({
      type: "connection.credential_rejected",
      data: {
        connectionId: connection.id,
        environmentId: owner.environmentId,
        alias: "kb",
        rejectedAt: rejected.health.credentialRejectedAt,
      },
    });
    expect(await task.call()).toMatchObject([{ error: "remote_auth_failed" }]);
    expect(await outbox()).toHaveLength(1);
    const list = await json<{ items: Connection[] }>(
      owner.api.get(`/environments/${owner.environmentId}/mcp-connections`),
      200,
    );
    expect(list.items[0]?.health.credentialRejected).toBe(true);

    // Accepted again: one success clears the condition and the run of failures.
    server.setAuth({ kind: "none" });
    expect(await task.call()).toMatchObject([{ outcome: "ok" }]);
    const healed = await json<Connection>(owner.api.get(url), 200);
    expect(healed.health).toMatchObject({
      consecutiveFailures: 0,
      credentialRejected: false,
      credentialRejectedAt: null,
      lastFailureCode: "remote_auth_failed",
    });
    // A new rejection after the recovery is a new transition: a second event.
    server.setAuth({ kind: "bearer", token: "only-this" }, 403);
    expect(await task.call()).toMatchObject([{ error: "remote_auth_failed" }]);
    expect(await outbox()).toHaveLength(2);
    expect(Date.parse(healed.health.lastSuccessAt ?? "")).toBeGreaterThan(
      Date.parse(rejected.health.lastFailureAt ?? ""),
    );
  }, 60_000);
});
