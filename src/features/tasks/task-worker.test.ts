import { eq } from "drizzle-orm";
import { onTestFinished } from "vitest";
import { databaseUrls, describe, expect, fileJobs, test } from "../../../test/fixtures.ts";
import { client } from "../../../test/http.ts";
import { echoTool } from "../../../test/lib/mcp-servers.ts";
import { scriptedModel } from "../../../test/lib/scripted-model.ts";
import { runAsJob } from "../../../test/lib/task-setup.ts";
import { createApp } from "../../app.ts";
import type { Deps } from "../../deps.ts";
import { tasks } from "../../platform/db/schema/tasks.ts";
import { registerTaskWorker } from "./task-queue.ts";

async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("tasks on the job queue", () => {
  test("a created task is picked up by a worker and runs to completion", async ({ deps, owner, mcp }) => {
    const server = await mcp.start({ tools: [echoTool("search")] });
    const script = scriptedModel([
      { toolCalls: [{ name: "kb__search", input: { text: "q" } }] },
      { text: "All clear." },
    ]);
    // A queue of this test's own, stopped when it ends: a worker left registered on the file's
    // queue would pick up the next test's task.
    const jobs = fileJobs(deps.database, databaseUrls.get(deps));
    await jobs.start();
    onTestFinished(() => jobs.stop({ timeoutMs: 5_000 }));
    const modelDeps: Deps = { ...deps, languageModel: script.model, jobs };
    const api = client(createApp(modelDeps), owner.apiKey);
    const base = `/environments/${owner.environmentId}/mcp-connections`;
    const conn = (await (
      await api.post(base, {
        alias: "kb",
        displayName: "KB",
        endpointUrl: server.url,
        auth: { kind: "none" },
      })
    ).json()) as { id: string };
    const disc = (await (
      await api.post(`${base}/${conn.id}/discoveries`, undefined, { revision: 1 })
    ).json()) as { id: string };
    await api.post(
      `${base}/${conn.id}/tool-approvals`,
      { discoveryId: disc.id, toolNames: ["search"] },
      { revision: 1 },
    );
    await api.put(`${base}/${conn.id}/enablement`, { enabled: true }, { revision: 2 });

    await registerTaskWorker(modelDeps);
    const created = (await (
      await api.post(`/environments/${owner.environmentId}/tasks`, { instructions: "Check." })
    ).json()) as { id: string };
    const finished = await waitFor(
      async () =>
        (await (await api.get(`/environments/${owner.environmentId}/tasks/${created.id}`)).json()) as {
          status: string;
          summary: string;
        },
      (t) => t.status === "succeeded" || t.status === "failed",
    );
    expect(finished).toMatchObject({ status: "succeeded", summary: "All clear." });
    expect(server.count("tools/call", "search")).toBe(1);
  });

  test("a task delivered again after its worker died is not re-run: it fails as interrupted", async ({
    deps,
    owner,
  }) => {
    const script = scriptedModel([]);
    const modelDeps: Deps = { ...deps, languageModel: script.model };
    const api = client(createApp(modelDeps), owner.apiKey);
    const created = (await (
      await api.post(`/environments/${owner.environmentId}/tasks`, { instructions: "x" })
    ).json()) as { id: string };
    // What a dead worker leaves behind: the task marked running, the job delivered again.
    await deps.db
      .update(tasks)
      .set({ status: "running", startedAt: new Date() })
      .where(eq(tasks.id, created.id));
    expect(await runAsJob(modelDeps, { id: created.id, organizationId: owner.organizationId })).toMatchObject(
      {
        status: "failed",
        errorCode: "interrupted",
      },
    );
    expect(script.calls).toHaveLength(0);
  });
});
