import { afterAll, vi } from "vitest";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { destructiveTool, echoTool } from "../../../test/lib/mcp-servers.ts";
import {
  investigationScript,
  lastOutput,
  PROBLEM_ID,
  type RunView,
  registerFixtureRepo,
  remediationHarness,
  removeFixtureRepos,
  waitForRun,
} from "../../../test/lib/remediation.ts";
import { call, scriptedModel } from "../../../test/lib/scripted-model.ts";
import { readyConnection } from "../../../test/lib/task-setup.ts";

vi.setConfig({ testTimeout: 120_000 });
afterAll(removeFixtureRepos);

describe("a remediation run has nobody to approve write calls", () => {
  test("its call of a write tool is refused and never sent; the run goes on with its read tools", async ({
    deps,
    owner,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [destructiveTool(), echoTool("status")] });
    const h = await remediationHarness(deps);
    const { api, repo } = h.forTenant(owner);
    await readyConnection(api, owner.environmentId, server.url, { alias: "db" });
    h.setModel(
      scriptedModel([
        call("db__drop_database", { text: "orders" }),
        (o) => {
          expect(lastOutput(o)).toMatchObject({ outcome: "refused", error: "write_not_permitted" });
          return call("db__status", { text: "orders" });
        },
        (o) => {
          expect(lastOutput(o)).toMatchObject({ outcome: "ok" });
          return call("get_problem");
        },
        ...investigationScript().slice(1),
      ]).model,
    );
    expect((await registerFixtureRepo(api, owner.environmentId, repo.path)).status).toBe(201);
    const res = await api.post(
      `/environments/${owner.environmentId}/problems/${PROBLEM_ID}/remediations`,
      {},
    );
    expect(res.status, await res.clone().text()).toBe(201);
    const run = await waitForRun(api, owner.environmentId, ((await res.json()) as RunView).id);
    expect(run.status, JSON.stringify(run.events, null, 2)).toBe("awaiting-review");

    expect(server.count("tools/call", "drop_database")).toBe(0);
    expect(server.count("tools/call", "status")).toBe(1);
    const calls = (await (
      await api.get(`/environments/${owner.environmentId}/tasks/${run.taskId}/tool-calls`)
    ).json()) as { items: { toolName: string; outcome: string; errorCode: string | null }[] };
    expect(calls.items.slice(0, 2)).toEqual([
      expect.objectContaining({
        toolName: "drop_database",
        outcome: "refused",
        errorCode: "write_not_permitted",
      }),
      expect.objectContaining({ toolName: "status", outcome: "ok" }),
    ]);
  });
});
