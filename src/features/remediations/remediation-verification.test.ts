import { afterAll, vi } from "vitest";
import { describe, expect, test } from "../../../test/fixtures.ts";
import {
  FIXED,
  lastOutput,
  registerFixtureRepo,
  remediationHarness,
  removeFixtureRepos,
  startRun,
  waitForRun,
} from "../../../test/lib/remediation.ts";
import { call, type lastToolResults, scriptedModel, type Turn } from "../../../test/lib/scripted-model.ts";

// Runs do real work (git, several sandboxed test runs, a job queue): room on a loaded machine.
vi.setConfig({ testTimeout: 180_000 });

afterAll(removeFixtureRepos);

type Options = Parameters<typeof lastToolResults>[0];
/** A turn that checks the previous tool's answer before making its call, as a model reading it would. */
const checked =
  (check: (out: ReturnType<typeof lastOutput>) => void, next: Turn) =>
  (o: Options): Turn => {
    check(lastOutput(o));
    return next;
  };

/** A new test that fails on the default branch with the problem's own error. */
const REPRO_TEST = `import assert from "node:assert/strict";
import { test } from "node:test";
import { findOrder } from "../src/orders.js";

test("GET /orders/ORD-000123 finds order 123 (problem prb_orderid0parse0negative0)", () => {
  assert.equal(findOrder("ORD-000123").id, 123);
});
`;

/** A "reproduction" that passes on the default branch: it checks nothing the bug breaks. */
const NOT_A_REPRO = `import assert from "node:assert/strict";
import { test } from "node:test";
import { parseOrderId } from "../src/order-id.js";

test("order ids parse to numbers", () => {
  assert.equal(typeof parseOrderId("ORD-000123"), "number");
});
`;

describe("remediations that prove themselves", () => {
  test("a reproducing test written first: fails on the default branch with the problem, passes on the branch → reproduced-and-fixed, and the pull request shows both runs and the test's diff", async ({
    deps,
    owner,
  }) => {
    const h = await remediationHarness(deps);
    const { api, repo } = h.forTenant(owner);
    const bodies: string[] = [];
    const host = h.services.localGit;
    if (!host) throw new Error("the harness has a local-git host");
    h.services.localGit = {
      ...host,
      openReview: (r, review) => {
        bodies.push(review.body);
        return host.openReview(r, review);
      },
    };
    const script = scriptedModel([
      call("get_problem"),
      call("write_file", { path: "test/order-lookup.test.js", content: REPRO_TEST }),
      // One file only, through the repository's runner; the answer says how it reports failures.
      call("run_tests", { file: "test/order-lookup.test.js" }),
      checked(
        (out) => {
          expect(out).toMatchObject({
            command: "node --test 'test/order-lookup.test.js'",
            exitCode: 1,
            passed: false,
            runner: { name: "node:test", failureFormat: expect.stringContaining("not ok") },
          });
          expect(out.failure).toContain("order -123 not found");
        },
        call("check_reproduction", { tests: ["test/order-lookup.test.js"] }),
      ),
      checked(
        (out) => {
          expect(out).toMatchObject({ outcome: "ok", reproduces: true, onDefaultBranch: { exitCode: 1 } });
        },
        call("write_file", { path: "src/order-id.js", content: FIXED }),
      ),
      // One test by name.
      call("run_tests", { name: "finds an order by its id" }),
      checked(
        (out) =>
          expect(out).toMatchObject({
            command: "node --test --test-name-pattern='finds an order by its id'",
            exitCode: 0,
          }),
        call("run_tests"),
      ),
      checked(
        (out) => expect(out.exitCode).toBe(0),
        call("finish", {
          summary: "parseOrderId kept the dash of ORD-; it now slices the whole prefix.",
          reproduction: { tests: ["test/order-lookup.test.js"] },
        }),
      ),
    ]);
    h.setModel(script.model);
    expect((await registerFixtureRepo(api, owner.environmentId, repo.path)).status).toBe(201);
    const run = await waitForRun(api, owner.environmentId, (await startRun(api, owner.environmentId)).id);
    expect(run.status, JSON.stringify(run.events, null, 2)).toBe("awaiting-review");
    expect(run.change?.files.sort()).toEqual(["src/order-id.js", "test/order-lookup.test.js"]);
    const v = run.verification;
    expect(v).toMatchObject({
      state: "reproduced-and-fixed",
      reason: null,
      reproduction: {
        tests: ["test/order-lookup.test.js"],
        matched: expect.stringContaining("order -123 not found"),
      },
      baseRun: { command: "node --test 'test/order-lookup.test.js'", exitCode: 1 },
      branchRun: { command: "node --test 'test/order-lookup.test.js'", exitCode: 0 },
      suiteRun: { command: "node --test", exitCode: 0 },
    });
    expect(v?.baseRun?.output).toContain("order -123 not found");
    expect(v?.reproduction?.testDiff).toContain("+++ b/test/order-lookup.test.js");
    expect(v?.reproduction?.testDiff).not.toContain("src/order-id.js");
    // The pull request's body: the state, the failing run, the passing run, the test's diff.
    expect(bodies).toHaveLength(1);
    const body = bodies[0] ?? "";
    expect(body).toContain("## Verification: `reproduced-and-fixed`");
    expect(body).toContain(
      "**Default branch (base + test only)**: `node --test 'test/order-lookup.test.js'` → exit 1",
    );
    expect(body).toContain("**Fix branch**: `node --test 'test/order-lookup.test.js'` → exit 0");
    expect(body).toContain('+  assert.equal(findOrder("ORD-000123").id, 123);');
    expect(run.events.find((e) => e.type === "tests_passed")?.message).toContain("Reproduced:");
    // The review shows it too.
    const review = (await (
      await api.get(`/environments/${owner.environmentId}/remediations/${run.id}/review`)
    ).json()) as { verification: { state: string } | null };
    expect(review.verification?.state).toBe("reproduced-and-fixed");
  });

  test("a 'reproduction' that passes on the default branch is refused; finishing with it anyway ends fixed-without-reproduction, saying why", async ({
    deps,
    owner,
  }) => {
    const h = await remediationHarness(deps);
    const { api, repo } = h.forTenant(owner);
    h.setModel(
      scriptedModel([
        call("write_file", { path: "test/order-type.test.js", content: NOT_A_REPRO }),
        call("check_reproduction", { tests: ["test/order-type.test.js"] }),
        checked(
          (out) => {
            expect(out).toMatchObject({
              outcome: "error",
              error: "reproduction_refused",
              verdict: "passes_on_base",
              onDefaultBranch: { exitCode: 0 },
            });
            expect(out.message).toContain("passes on the default branch");
          },
          call("write_file", { path: "src/order-id.js", content: FIXED }),
        ),
        call("finish", {
          summary: "Slices the whole ORD- prefix.",
          reproduction: { tests: ["test/order-type.test.js"] },
        }),
      ]).model,
    );
    await registerFixtureRepo(api, owner.environmentId, repo.path);
    const run = await waitForRun(api, owner.environmentId, (await startRun(api, owner.environmentId)).id);
    expect(run.status, JSON.stringify(run.events, null, 2)).toBe("awaiting-review");
    expect(run.verification).toMatchObject({
      state: "fixed-without-reproduction",
      reproduction: { tests: ["test/order-type.test.js"], matched: null },
      baseRun: { exitCode: 0 },
    });
    expect(run.verification?.reason).toContain("Refused as a reproduction");
    expect(run.verification?.reason).toContain("passes on the default branch");
  });

  test("no reproduction could be written: fixed-without-reproduction with the agent's reason", async ({
    deps,
    owner,
  }) => {
    const h = await remediationHarness(deps);
    const { api, repo } = h.forTenant(owner);
    const reason =
      "The failure needs the production database's order 123; the repository has no fixture for it.";
    h.setModel(
      scriptedModel([
        call("write_file", { path: "src/order-id.js", content: FIXED }),
        call("finish", { summary: "Slices the whole ORD- prefix.", noReproductionReason: reason }),
      ]).model,
    );
    await registerFixtureRepo(api, owner.environmentId, repo.path);
    const run = await waitForRun(api, owner.environmentId, (await startRun(api, owner.environmentId)).id);
    expect(run.status).toBe("awaiting-review");
    expect(run.verification).toMatchObject({
      state: "fixed-without-reproduction",
      reason,
      reproduction: null,
      baseRun: null,
      branchRun: null,
      suiteRun: { exitCode: 0 },
    });
  });

  test("a fix that makes the reproduction pass but breaks another test is not opened: not-fixed", async ({
    deps,
    owner,
  }) => {
    const h = await remediationHarness(deps);
    const { api, repo } = h.forTenant(owner);
    // Drops the prefix check: the order is found, but "rejects ids without the prefix" now fails.
    const breaking = `export function parseOrderId(id) {\n  return Number(String(id).replace(/\\D/g, ""));\n}\n`;
    h.setModel(
      scriptedModel([
        call("write_file", { path: "test/order-lookup.test.js", content: REPRO_TEST }),
        call("write_file", { path: "src/order-id.js", content: breaking }),
        call("finish", {
          summary: "Parses the digits.",
          reproduction: { tests: ["test/order-lookup.test.js"] },
        }),
      ]).model,
    );
    await registerFixtureRepo(api, owner.environmentId, repo.path);
    const run = await waitForRun(api, owner.environmentId, (await startRun(api, owner.environmentId)).id);
    expect(run).toMatchObject({ status: "failed", reasonCode: "tests_failed", prUrl: null, branch: null });
    expect(run.verification).toMatchObject({
      state: "not-fixed",
      reproduction: { tests: ["test/order-lookup.test.js"] },
      suiteRun: { command: "node --test", exitCode: 1 },
    });
    expect(run.verification?.suiteRun?.output).toContain("rejects ids without the prefix");
    expect(repo.git("branch", "--list", "patchbay/*").trim()).toBe("");
  });

  test("a reproduction named with a leading ./ is the same file: reproduced-and-fixed", async ({
    deps,
    owner,
  }) => {
    const h = await remediationHarness(deps);
    const { api, repo } = h.forTenant(owner);
    h.setModel(
      scriptedModel([
        call("write_file", { path: "test/order-lookup.test.js", content: REPRO_TEST }),
        call("write_file", { path: "src/order-id.js", content: FIXED }),
        call("finish", {
          summary: "parseOrderId now slices the whole prefix.",
          reproduction: { tests: ["./test/order-lookup.test.js"] },
        }),
      ]).model,
    );
    await registerFixtureRepo(api, owner.environmentId, repo.path);
    const run = await waitForRun(api, owner.environmentId, (await startRun(api, owner.environmentId)).id);
    expect(run.status, JSON.stringify(run.events, null, 2)).toBe("awaiting-review");
    expect(run.verification).toMatchObject({ state: "reproduced-and-fixed", baseRun: { exitCode: 1 } });
  });
});
