import { asc, eq } from "drizzle-orm";
import { afterAll, onTestFinished, vi } from "vitest";
import { databaseUrls, describe, expect, fileJobs, test } from "../../../test/fixtures.ts";
import {
  FIXED,
  investigationScript,
  PROBLEM_ID,
  type RunView,
  remediationHarness,
  removeFixtureRepos,
  waitForRun,
} from "../../../test/lib/remediation.ts";
import { scriptedModel, type Turn } from "../../../test/lib/scripted-model.ts";
import { tasks, taskToolCalls } from "../../platform/db/schema/tasks.ts";
import { registerRemediationWorker } from "./run-step.ts";

// Runs do real work (git, a sandboxed test suite, a job queue): give them room on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

afterAll(removeFixtureRepos);

describe("a worker that stops mid-run", () => {
  test("another instance resumes after the last committed step; no step runs twice; the old worker is fenced out", async ({
    deps,
    owner,
  }) => {
    const h = await remediationHarness(deps, { worker: false });
    const { api, repo } = h.forTenant(owner);
    const script = investigationScript();
    // Turn 5 (read_file) is in flight when instance A goes away; A's model answers only later,
    // after B has finished — its late step must not land.
    let entered!: () => void;
    const inFlight = new Promise<void>((r) => {
      entered = r;
    });
    let release!: () => void;
    const late = new Promise<void>((r) => {
      release = r;
    });
    const hang = async (): Promise<Turn> => {
      entered();
      await late;
      return {
        toolCalls: [
          { name: "write_file", input: { path: "src/order-id.js", content: "// from the dead worker\n" } },
        ],
      };
    };
    const model = scriptedModel([...script.slice(0, 4), hang, ...script.slice(4)]);
    h.setModel(model.model);

    // Instance A: a queue of its own on the file's database, so no remediation worker outlives
    // this test on the file's queue (the next test claims steps by hand).
    const instance = () => fileJobs(deps.database, databaseUrls.get(deps));
    const a = instance();
    // Stopped even when the test fails before A's planned stop (a stop after a stop does nothing).
    onTestFinished(() => a.stop({ graceful: false }));
    await registerRemediationWorker({ ...h.deps, jobs: a }, { concurrency: 1 });
    await a.start();
    await api.post(`/environments/${owner.environmentId}/repositories`, {
      provider: "local-git",
      path: repo.path,
      defaultBranch: "main",
      testCommand: "node --test",
      services: ["checkout"],
    });
    const res = await api.post(
      `/environments/${owner.environmentId}/problems/${PROBLEM_ID}/remediations`,
      {},
    );
    const run = (await res.json()) as RunView;
    await inFlight;
    // A shuts down while the step is active: pg-boss records the run as abandoned.
    await a.stop({ timeoutMs: 300 });

    // Instance B on the same database picks the abandoned job up at start.
    const b = instance();
    await registerRemediationWorker({ ...h.deps, jobs: b }, { concurrency: 1 });
    await b.start();
    try {
      const done = await waitForRun(api, owner.environmentId, run.id, [
        "awaiting-review",
        "failed",
        "cancelled",
      ]);
      expect(done.status, JSON.stringify(done.events, null, 2)).toBe("awaiting-review");
      release();
      await new Promise((r) => setTimeout(r, 1_000));

      const [task] = await deps.db
        .select()
        .from(tasks)
        .where(eq(tasks.id, done.taskId ?? ""));
      const calls = (task?.transcript ?? []).filter((e) => e.type === "tool_call").map((e) => e.tool);
      // Steps 1–4 once (committed by A), the interrupted step once (by B), then the rest once.
      expect(calls).toEqual([
        "get_problem",
        "get_trace",
        "search_logs",
        "search_files",
        "read_file",
        "run_tests",
        "write_file",
        "run_tests",
        "finish",
      ]);
      // The call record holds the same calls, each once and final: the dead worker's late
      // answer ran nothing.
      const record = await deps.db
        .select()
        .from(taskToolCalls)
        .where(eq(taskToolCalls.taskId, done.taskId ?? ""))
        .orderBy(asc(taskToolCalls.id));
      expect(record.map((c) => [c.toolName, c.outcome])).toEqual(calls.map((tool) => [tool, "ok"]));
      const after = await waitForRun(api, owner.environmentId, run.id);
      expect(after.events.filter((e) => e.type === "agent_step")).toHaveLength(9);
      expect(after.events.filter((e) => e.status === "investigating")).toHaveLength(1);
      expect(after.events.filter((e) => e.type === "review_opened")).toHaveLength(1);
      // The dead worker's late write reached neither the branch nor the run.
      expect(repo.git("show", `${after.headCommit}:src/order-id.js`)).toBe(FIXED);
      expect(repo.git("rev-list", "--count", `main..patchbay/${run.id}`).trim()).toBe("1");
    } finally {
      release();
      await b.stop({ timeoutMs: 5_000 });
    }
  });
});

describe("claims", () => {
  test("a newer claim of the same step fences the older holder's writes; a stale job does nothing", async ({
    deps,
    owner,
  }) => {
    const h = await remediationHarness(deps, { worker: false });
    const { api } = h.forTenant(owner);
    h.setModel(scriptedModel([]).model);
    const { claimStep, updateHeld, advance, LostClaim } = await import("./run-state.ts");
    const res = await api.post(
      `/environments/${owner.environmentId}/problems/${PROBLEM_ID}/remediations`,
      {},
    );
    const run = (await res.json()) as RunView;
    const first = await claimStep(deps.db, { remediationId: run.id, stepSeq: 1 });
    const second = await claimStep(deps.db, { remediationId: run.id, stepSeq: 1 });
    if (!first || !second) throw new Error("not claimed");
    expect(second.lease).toBe(first.lease + 1);
    const old = { id: run.id, stepSeq: 1, lease: first.lease };
    await expect(updateHeld(h.deps, old, { service: "x" })).rejects.toBeInstanceOf(LostClaim);
    await expect(
      advance(h.deps, old, "failed", { reasonCode: "x", reason: "x" }, { type: "failed", message: "x" }),
    ).rejects.toBeInstanceOf(LostClaim);
    const moved = await advance(
      h.deps,
      { id: run.id, stepSeq: 1, lease: second.lease },
      "cancelled",
      {},
      {
        type: "cancelled",
        message: "test",
      },
    );
    expect(moved).toMatchObject({ status: "cancelled", stepSeq: 2 });
    expect(await claimStep(deps.db, { remediationId: run.id, stepSeq: 1 })).toBeUndefined();
  });
});
