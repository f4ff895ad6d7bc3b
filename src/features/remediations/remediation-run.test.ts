import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, vi } from "vitest";
import { describe, expect, test } from "../../../test/fixtures.ts";
import type { GitRepo } from "../../../test/lib/git-repo.ts";
import {
  FIXED,
  investigationScript,
  PROBLEM_ID,
  type RunView,
  registerFixtureRepo,
  remediationHarness,
  removeFixtureRepos,
  waitForRun,
} from "../../../test/lib/remediation.ts";
import { scriptedModel } from "../../../test/lib/scripted-model.ts";

// Runs do real work (git, a sandboxed test suite, a job queue): give them room on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

afterAll(removeFixtureRepos);

/** Runs the repository's tests on a commit, in a throwaway checkout. */
function testsAt(repo: GitRepo, commit: string): number {
  const dir = mkdtempSync(join(tmpdir(), "patchbay-check-"));
  try {
    execFileSync("sh", ["-c", `git -C '${repo.path}' archive ${commit} | tar -x -C '${dir}'`]);
    execFileSync(process.execPath, ["--test"], { cwd: dir, stdio: "ignore" });
    return 0;
  } catch (error) {
    return (error as { status?: number }).status ?? 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("remediation run on local-git", () => {
  test("a scripted investigation fixes the bug: queued → … → awaiting-review, a commit on patchbay/<id> whose tests pass", async ({
    deps,
    owner,
  }) => {
    const h = await remediationHarness(deps);
    const { api, repo } = h.forTenant(owner);
    const script = scriptedModel(investigationScript());
    h.setModel(script.model);
    expect((await registerFixtureRepo(api, owner.environmentId, repo.path)).status).toBe(201);

    const res = await api.post(
      `/environments/${owner.environmentId}/problems/${PROBLEM_ID}/remediations`,
      {},
    );
    expect(res.status, await res.clone().text()).toBe(201);
    const started = (await res.json()) as RunView;
    expect(started).toMatchObject({
      status: "queued",
      threadUrl: `${deps.config.baseUrl}/remediations/${started.id}`,
    });

    const run = await waitForRun(api, owner.environmentId, started.id);
    expect(run.status, JSON.stringify(run.events, null, 2)).toBe("awaiting-review");
    expect(run.prUrl).toBe(`${deps.config.baseUrl}/remediations/${run.id}/review`);
    expect(run.branch).toBe(`patchbay/${run.id}`);
    expect(run.change).toMatchObject({ files: ["src/order-id.js"], risk: { high: false } });
    expect(run.validation).toMatchObject({ exitCode: 0 });
    // The test it found fails with the problem on the default branch and passes on the branch.
    expect(run.verification).toMatchObject({
      state: "reproduced-and-fixed",
      reason: null,
      reproduction: {
        tests: ["test/order-id.test.js"],
        matched: expect.stringContaining("order -123 not found"),
      },
      baseRun: { command: "node --test 'test/order-id.test.js'", exitCode: 1 },
      branchRun: { command: "node --test 'test/order-id.test.js'", exitCode: 0 },
      suiteRun: { command: "node --test", exitCode: 0 },
    });
    expect(run.verification?.baseRun?.output).toContain("order -123 not found");

    // Every status, in order, once.
    const statuses = run.events.map((e) => e.status).filter((s): s is string => s !== null);
    expect(statuses).toEqual([
      "queued",
      "investigating",
      "coding",
      "validating",
      "opening-pr",
      "awaiting-review",
    ]);
    expect(run.events.filter((e) => e.type === "agent_step")).toHaveLength(9);

    // The branch holds one commit on the base whose diff is the fix.
    const head = repo.git("rev-parse", `refs/heads/patchbay/${run.id}`).trim();
    expect(head).toBe(run.headCommit);
    expect(repo.git("rev-parse", `${head}^`).trim()).toBe(repo.git("rev-parse", "main").trim());
    expect(repo.git("show", `${head}:src/order-id.js`)).toBe(FIXED);
    expect(repo.git("diff", "--name-only", "main", head).trim()).toBe("src/order-id.js");
    // Tests fail on the base and pass on the branch.
    expect(testsAt(repo, "main")).not.toBe(0);
    expect(testsAt(repo, head)).toBe(0);
    // The human's checkout is untouched: still on main, nothing modified.
    expect(repo.git("symbolic-ref", "HEAD").trim()).toBe("refs/heads/main");
    expect(repo.git("status", "--porcelain")).toBe("");

    // The review: diff, test result, steps to merge by hand.
    const review = (await (
      await api.get(`/environments/${owner.environmentId}/remediations/${run.id}/review`)
    ).json()) as { diff: string; mergeSteps: string[]; files: string[] };
    expect(review.files).toEqual(["src/order-id.js"]);
    expect(review.diff).toContain('+  return Number(id.slice("ORD-".length));');
    expect(review.mergeSteps).toContain(`git merge --no-ff patchbay/${run.id}`);

    // The agent's task is a task of the task runtime, with its transcript.
    const task = (await (
      await api.get(`/environments/${owner.environmentId}/tasks/${run.taskId}`)
    ).json()) as {
      kind: string;
      status: string;
      usage: { steps: number };
    };
    expect(task).toMatchObject({ kind: "remediation", status: "succeeded", usage: { steps: 9 } });
    expect(script.offeredTools(0).sort()).toEqual([
      "check_reproduction",
      "finish",
      "get_problem",
      "get_trace",
      "list_files",
      "read_file",
      "run_tests",
      "search_files",
      "search_logs",
      "write_file",
    ]);
    // Its built-in tools' calls are in the task's call record, like any task call, final.
    const record = (await (
      await api.get(`/environments/${owner.environmentId}/tasks/${run.taskId}/tool-calls`)
    ).json()) as { items: { toolName: string; connectionId: string | null; outcome: string }[] };
    expect(record.items.map((c) => [c.toolName, c.connectionId, c.outcome])).toEqual(
      [
        "get_problem",
        "get_trace",
        "search_logs",
        "search_files",
        "read_file",
        "run_tests",
        "write_file",
        "run_tests",
        "finish",
      ].map((tool) => [tool, null, "ok"]),
    );

    // Merged by hand: the run learns it on the next read. patchbay itself never merges.
    repo.git("merge", "--no-ff", "-q", "-m", "merge fix", `patchbay/${run.id}`);
    expect((await waitForRun(api, owner.environmentId, run.id, ["merged"])).status).toBe("merged");
  });
});
