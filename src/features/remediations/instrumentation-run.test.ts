import { afterAll, vi } from "vitest";
import { describe, expect, newTenant, test } from "../../../test/fixtures.ts";
import { payingFetch, startTestChain } from "../../../test/lib/dev-chain.ts";
import { keyFor } from "../../../test/lib/members.ts";
import { jsonPost } from "../../../test/lib/paid-app.ts";
import {
  FIXED,
  fixtureFiles,
  INSTRUMENTATION_FILE,
  instrumentationScript,
  makeGitRepo,
  removeFixtureRepos,
  telemetryHarness,
} from "../../../test/lib/remediation.ts";
import { eventually } from "../../../test/lib/wait.ts";
import { memberships } from "../../platform/db/schema/users.ts";

vi.setConfig({ testTimeout: 180_000 });
afterAll(removeFixtureRepos);

const INSTRUMENTATION = 2_000_000n; // $2

describe("POST /x402/instrumentation/pr", () => {
  test("a paid request becomes a reviewed branch adding OpenTelemetry to the service's repository", async ({
    deps,
  }) => {
    const chain = await startTestChain();
    try {
      const h = await telemetryHarness({ ...deps, payments: chain.payments }, instrumentationScript());
      const base = h.deps.config.baseUrl;
      const payer = await chain.fundedPayer(25, "10");
      const pay = payingFetch(h.app, chain.payments, payer.privateKey);
      const signup = await (await pay(`${base}/x402/signup`, jsonPost({}))).json();

      // A human owns the organisation and maps the repository to the service.
      const human = await newTenant(h.deps, h.app, "instrument-owner@example.com");
      await h.deps.db
        .insert(memberships)
        .values({ organizationId: signup.organization.id, userId: human.userId, role: "owner" });
      const api = await keyFor(h.deps, h.app, {
        organizationId: signup.organization.id,
        userId: human.userId,
      });
      // A healthy repository: its tests pass before and after.
      const repo = makeGitRepo({ ...fixtureFiles, "src/order-id.js": FIXED });
      const registered = await api.post(`/environments/${signup.environment.id}/repositories`, {
        provider: "local-git",
        path: repo.path,
        defaultBranch: "main",
        testCommand: "node --test",
        services: ["checkout"],
      });
      expect(registered.status, await registered.clone().text()).toBe(201);
      const repositoryId = (await registered.json()).id;

      const before = await chain.balanceOf(payer.address);
      const bad = await pay(`${base}/x402/instrumentation/pr`, jsonPost({ service: "" }));
      expect(bad.status).toBe(400);
      // The agent names the repository by the id of its registration.
      const res = await pay(
        `${base}/x402/instrumentation/pr`,
        jsonPost({ service: "checkout", repository: repositoryId }),
      );
      expect(res.status, await res.clone().text()).toBe(201);
      const started = await res.json();
      expect(started).toMatchObject({ status: "queued", service: "checkout", repository: repositoryId });
      // Nothing waits for a human before the run: the organisation is claimed, no GitHub App is
      // needed for a local repository, and the repository is selected.
      expect(started.operatorSteps.map((s: { step: string; status: string }) => [s.step, s.status])).toEqual([
        ["claim_organization", "done"],
        ["install_app", "not_needed"],
        ["select_repositories", "done"],
        ["approve_change", "upcoming"],
        ["review_pull_request", "upcoming"],
      ]);
      expect(started.next_actions.map((a: { action: string }) => a.action)).toEqual(["poll_remediation"]);
      expect(await chain.balanceOf(payer.address)).toBe(before - INSTRUMENTATION);
      // One at a time per service, refused for free.
      const again = await pay(`${base}/x402/instrumentation/pr`, jsonPost({ service: "checkout" }));
      expect(again.status).toBe(409);
      expect((await again.json()).code).toBe("remediation_in_progress");
      expect(await chain.balanceOf(payer.address)).toBe(before - INSTRUMENTATION);

      const session = await (await pay(`${base}/x402/onboard`, jsonPost({}))).json();
      const poll = async () =>
        (
          await h.app.request(`/x402/remediations/${started.remediationId}`, {
            headers: { authorization: `Bearer ${session.sessionToken}` },
          })
        ).json();
      const ready = await eventually(async () => {
        const run = await poll();
        if (["failed", "cancelled"].includes(run.status)) throw new Error(JSON.stringify(run));
        return run.status === "awaiting-review" ? run : undefined;
      }, 120_000);
      expect(ready).toMatchObject({
        kind: "instrumentation",
        problemId: null,
        service: "checkout",
        repositoryId,
        requestedRepository: repositoryId,
        prUrl: `${base}/remediations/${started.remediationId}/review`,
        change: { files: ["package.json", "src/instrumentation.js"], risk: { high: false } },
        validation: { exitCode: 0 },
        operatorSteps: expect.arrayContaining([
          expect.objectContaining({ step: "approve_change", status: "not_needed" }),
          expect.objectContaining({ step: "review_pull_request", status: "pending", url: ready.prUrl }),
        ]),
      });
      expect(ready.next_actions[0]).toMatchObject({ action: "request_review", href: ready.prUrl });
      // The branch holds the instrumentation; the base is untouched; nothing was merged.
      expect(repo.git("show", `${ready.branch}:src/instrumentation.js`)).toBe(INSTRUMENTATION_FILE);
      expect(repo.git("log", "-1", "--format=%s", ready.branch).trim()).toBe(
        "feat: OpenTelemetry instrumentation for checkout",
      );
      expect(repo.git("ls-tree", "--name-only", "main", "src/").split("\n")).not.toContain(
        "src/instrumentation.js",
      );
      expect(repo.git("rev-parse", "main").trim()).toBe(ready.baseCommit);
    } finally {
      await chain.close();
    }
  });
});
