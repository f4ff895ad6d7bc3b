import { eq } from "drizzle-orm";
import { afterAll, vi } from "vitest";
import type { z } from "zod";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { problem } from "../../../test/http.ts";
import { createMemberKey } from "../../../test/lib/members.ts";
import {
  BUGGY,
  FIXED,
  investigationScript,
  PROBLEM_ID,
  type RunView,
  registerFixtureRepo,
  remediationHarness,
  removeFixtureRepos,
  startRun,
  waitForRun,
} from "../../../test/lib/remediation.ts";
import { call, scriptedModel } from "../../../test/lib/scripted-model.ts";
import { remediations } from "../../platform/db/schema/remediations.ts";
import { taskToolCalls } from "../../platform/db/schema/tasks.ts";
import { webhookDeliveries } from "../../platform/db/schema/webhooks.ts";
import type { WebhookEventType } from "../webhooks/event-types.ts";
import { webhookEventData } from "../webhooks/payloads.ts";

// Runs do real work (git, a sandboxed test suite, a job queue): give them room on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

afterAll(removeFixtureRepos);

describe("remediation failure paths", () => {
  test("no repository: waits in awaiting-approval with a link, resumes when a human registers one", async ({
    deps,
    owner,
  }) => {
    const h = await remediationHarness(deps);
    const { api, repo } = h.forTenant(owner);
    h.setModel(scriptedModel(investigationScript()).model);
    const run = await startRun(api, owner.environmentId);
    const waiting = await waitForRun(api, owner.environmentId, run.id, ["awaiting-approval"]);
    expect(waiting.approval).toMatchObject({
      kind: "repository_access",
      approvalUrl: `${deps.config.baseUrl}/remediations/${run.id}/approval`,
    });
    expect(waiting.approval?.message).toContain('service "checkout"');
    // Approving is not how repository access is granted.
    const wrong = await api.post(`/environments/${owner.environmentId}/remediations/${run.id}/approval`);
    expect((await problem(wrong)).code).toBe("approval_not_pending");

    expect((await registerFixtureRepo(api, owner.environmentId, repo.path)).status).toBe(201);
    const done = await waitForRun(api, owner.environmentId, run.id, ["awaiting-review", "failed"]);
    expect(done.status).toBe("awaiting-review");
    expect(done.events.map((e) => e.type)).toContain("approval_granted");
  });

  test("tests still failing: no pull request, failed with reason tests_failed", async ({ deps, owner }) => {
    const h = await remediationHarness(deps);
    const { api, repo } = h.forTenant(owner);
    // A "fix" that still keeps the dash: the suite keeps failing.
    h.setModel(scriptedModel(investigationScript({ fix: BUGGY.replace("slice(3)", "slice(2)") })).model);
    await registerFixtureRepo(api, owner.environmentId, repo.path);
    const run = await startRun(api, owner.environmentId);
    const done = await waitForRun(api, owner.environmentId, run.id);
    expect(done).toMatchObject({ status: "failed", reasonCode: "tests_failed", prUrl: null, branch: null });
    expect(done.reason).toContain("no pull request was opened");
    expect(done.validation?.exitCode).not.toBe(0);
    expect(repo.git("branch", "--list", "patchbay/*").trim()).toBe("");
  });

  test("model error: failed with model_error, details only in the log", async ({ deps, owner, logs }) => {
    const h = await remediationHarness(deps);
    const { api, repo } = h.forTenant(owner);
    h.setModel(
      scriptedModel([
        call("get_problem"),
        () => {
          throw new Error("upstream 529: overloaded (secret-ish provider detail)");
        },
      ]).model,
    );
    await registerFixtureRepo(api, owner.environmentId, repo.path);
    const done = await waitForRun(api, owner.environmentId, (await startRun(api, owner.environmentId)).id);
    expect(done).toMatchObject({ status: "failed", reasonCode: "model_error" });
    expect(JSON.stringify(done)).not.toContain("overloaded");
    expect(logs.text()).toContain("remediation model call failed");
  });

  test("budget exhausted: a run past its step budget fails with budget_exhausted", async ({
    deps,
    owner,
  }) => {
    const h = await remediationHarness(deps);
    const { api, repo } = h.forTenant(owner);
    h.setModel(
      scriptedModel([call("list_files"), call("list_files", { path: "src" }), call("get_problem")]).model,
    );
    await registerFixtureRepo(api, owner.environmentId, repo.path);
    const run = await startRun(api, owner.environmentId, { budgets: { maxSteps: 3 } });
    const done = await waitForRun(api, owner.environmentId, run.id);
    expect(done).toMatchObject({ status: "failed", reasonCode: "budget_exhausted" });
    expect(done.reason).toContain("Step budget of 3");
  });

  test("cancel: a waiting run ends at once; a working run stops after its current step", async ({
    deps,
    owner,
  }) => {
    const h = await remediationHarness(deps);
    const { api, repo } = h.forTenant(owner);
    h.setModel(scriptedModel([]).model);
    const waiting = await startRun(api, owner.environmentId);
    await waitForRun(api, owner.environmentId, waiting.id, ["awaiting-approval"]);
    const cancelled = await api.post(
      `/environments/${owner.environmentId}/remediations/${waiting.id}/cancellation`,
    );
    expect(((await cancelled.json()) as RunView).status).toBe("cancelled");
    const again = await api.post(
      `/environments/${owner.environmentId}/remediations/${waiting.id}/cancellation`,
    );
    expect(again.status).toBe(409);
    expect((await problem(again)).code).toBe("remediation_not_cancellable");

    let runId = "";
    const script = scriptedModel([
      call("get_problem"),
      async () => {
        const res = await api.post(`/environments/${owner.environmentId}/remediations/${runId}/cancellation`);
        expect(((await res.json()) as RunView).status).toBe("investigating");
        return call("list_files");
      },
      call("read_file", { path: "src/order-id.js" }),
    ]);
    h.setModel(script.model);
    await registerFixtureRepo(api, owner.environmentId, repo.path);
    runId = (await startRun(api, owner.environmentId)).id;
    const done = await waitForRun(api, owner.environmentId, runId, [
      "cancelled",
      "failed",
      "awaiting-review",
    ]);
    expect(done.status).toBe("cancelled");
    expect(script.calls).toHaveLength(2);
    expect(done.events.map((e) => e.type)).toEqual(expect.arrayContaining(["cancel_requested", "cancelled"]));
    // The call the model asked for after the request did not run: the run's task was asked to
    // stop as well, and the gate refused it.
    const [row] = await deps.db.select().from(remediations).where(eq(remediations.id, runId));
    const calls = await deps.db
      .select()
      .from(taskToolCalls)
      .where(eq(taskToolCalls.taskId, row?.taskId ?? ""));
    expect(calls.map((c) => [c.modelToolName, c.outcome, c.errorCode])).toEqual([
      ["get_problem", "ok", null],
      ["list_files", "refused", "task_not_running"],
    ]);
  });

  test("a cancellation requested during validation wins over opening the pull request", async ({
    deps,
    owner,
  }) => {
    const h = await remediationHarness(deps);
    const { api, repo } = h.forTenant(owner);
    h.setModel(
      scriptedModel([
        call("get_problem"),
        call("write_file", { path: "src/order-id.js", content: FIXED }),
        call("finish", { summary: "fixed the prefix" }),
      ]).model,
    );
    await api.post(`/environments/${owner.environmentId}/repositories`, {
      provider: "local-git",
      path: repo.path,
      defaultBranch: "main",
      testCommand: "sleep 3 && node --test",
      services: ["checkout"],
    });
    const run = await startRun(api, owner.environmentId);
    await waitForRun(api, owner.environmentId, run.id, ["validating"]);
    const res = await api.post(`/environments/${owner.environmentId}/remediations/${run.id}/cancellation`);
    // The answer shows the run as the request found it: still validating, or, when the worker
    // stopped the test command before the answer was read back, already cancelled.
    expect(["validating", "cancelled"]).toContain(((await res.json()) as RunView).status);
    const done = await waitForRun(api, owner.environmentId, run.id, [
      "cancelled",
      "awaiting-review",
      "failed",
    ]);
    expect(done.status).toBe("cancelled");
    expect(done.prUrl).toBeNull();
    expect(repo.git("branch", "--list", "patchbay/*").trim()).toBe("");
  });

  test("a high-risk change waits for a human's approval, then proceeds", async ({ deps, owner }) => {
    const h = await remediationHarness(deps);
    const { api, repo } = h.forTenant(owner);
    const script = investigationScript();
    // Besides the fix, the agent "fixes" the existing test too: that needs a human.
    const steps = [
      ...script.slice(0, 7),
      call("write_file", {
        path: "test/order-id.test.js",
        content: 'import { test } from "node:test";\ntest("ok", () => {});\n',
      }),
      ...script.slice(7),
    ];
    h.setModel(scriptedModel(steps).model);
    // Subscribed, so the run's events are written to the outbox (and checked below).
    const subscribed = await api.post(`/organizations/${owner.organizationId}/webhook-endpoints`, {
      url: "https://hooks.example.com/patchbay",
      eventTypes: ["operator_approval.requested", "pull_request.awaiting_review"],
    });
    expect(subscribed.status, await subscribed.clone().text()).toBe(201);
    await registerFixtureRepo(api, owner.environmentId, repo.path);
    const run = await startRun(api, owner.environmentId);
    const waiting = await waitForRun(api, owner.environmentId, run.id);
    expect(waiting.status).toBe("awaiting-approval");
    expect(waiting.approval?.kind).toBe("high_risk_change");
    expect(waiting.change?.risk.reasons).toEqual(["edits the existing test test/order-id.test.js"]);

    const member = await createMemberKey(deps, h.app, owner);
    expect(
      (await member.post(`/environments/${owner.environmentId}/remediations/${run.id}/approval`)).status,
    ).toBe(403);
    const approved = await api.post(`/environments/${owner.environmentId}/remediations/${run.id}/approval`);
    expect(approved.status).toBe(200);
    const done = await waitForRun(api, owner.environmentId, run.id, ["awaiting-review", "failed"]);
    expect(done.status).toBe("awaiting-review");
    expect(repo.git("show", `${done.headCommit}:src/order-id.js`)).toBe(FIXED);

    // Each event's data is exactly what the OpenAPI document publishes for its type.
    const sent = await deps.db
      .select({ type: webhookDeliveries.eventType, payload: webhookDeliveries.payload })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.organizationId, owner.organizationId));
    expect(sent.map((d) => d.type).sort()).toEqual([
      "operator_approval.requested",
      "pull_request.awaiting_review",
    ]);
    for (const { type, payload } of sent) {
      const schema = webhookEventData[type as WebhookEventType].schema as z.ZodObject;
      expect(() => schema.strict().parse((payload as { data: unknown }).data), type).not.toThrow();
    }
  });

  test("start: unknown problem 404, one unfinished run per problem 409, no model 503, tenancy 404", async ({
    deps,
    owner,
    stranger,
  }) => {
    const h = await remediationHarness(deps);
    const { api } = h.forTenant(owner);
    h.setModel(scriptedModel([]).model);
    const base = `/environments/${owner.environmentId}`;
    const unknown = await api.post(`${base}/problems/prb_nope/remediations`, {});
    expect(unknown.status).toBe(404);
    const first = await startRun(api, owner.environmentId);
    await waitForRun(api, owner.environmentId, first.id, ["awaiting-approval"]);
    const second = await api.post(`${base}/problems/${PROBLEM_ID}/remediations`, {});
    expect(second.status).toBe(409);
    expect(await problem(second)).toMatchObject({
      code: "remediation_in_progress",
      remediationId: first.id,
      remediationStatus: expect.any(String),
    });

    const list = (await (await api.get(`${base}/remediations?problemId=${PROBLEM_ID}`)).json()) as {
      items: RunView[];
    };
    expect(list.items.map((i) => i.id)).toEqual([first.id]);

    const strangerApi = h.forTenant(stranger).api;
    expect((await strangerApi.get(`${base}/remediations/${first.id}`)).status).toBe(404);
    expect(
      (await strangerApi.get(`/environments/${stranger.environmentId}/remediations/${first.id}`)).status,
    ).toBe(404);
    expect((await strangerApi.post(`${base}/remediations/${first.id}/cancellation`)).status).toBe(404);

    h.setModel(undefined as never);
    // The evidence points at the owner's environment again (the stranger's view moved it).
    h.forTenant(owner);
    const noModel = await api.post(
      `/environments/${owner.environmentId}/problems/${PROBLEM_ID}/remediations`,
      {},
    );
    expect(noModel.status).toBe(503);
    expect((await problem(noModel)).code).toBe("model_not_configured");
    // An unknown problem is a 404 before any configuration check.
    const unknownWithoutModel = await api.post(`${base}/problems/prb_nope/remediations`, {});
    expect(unknownWithoutModel.status).toBe(404);
    expect((await problem(unknownWithoutModel)).code).toBe("not_found");
  });
});
