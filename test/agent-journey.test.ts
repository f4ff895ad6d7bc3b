import { afterAll, vi } from "vitest";
import { describe, expect, newTenant, test } from "./fixtures.ts";
import { appFetch, payingFetch, signingInFetch, startTestChain } from "./lib/dev-chain.ts";
import { keyFor } from "./lib/members.ts";
import {
  fixtureFiles,
  investigationScript,
  makeGitRepo,
  removeFixtureRepos,
  telemetryHarness,
} from "./lib/remediation.ts";
import { hexId, jsonSpan, jsonTraces } from "./lib/telemetry.ts";
import { eventually } from "./lib/wait.ts";
import { givePassword, TEST_PASSWORD, webClient } from "./web.ts";

vi.setConfig({ testTimeout: 180_000 });
afterAll(removeFixtureRepos);

type Action = {
  action: string;
  method: "GET" | "POST";
  href: string;
  price: string;
  body?: unknown;
  x_assumed_state?: string;
};

/**
 * The agent journey of spec part 1B in one test, paid on the dev chain: catalog → signup →
 * telemetry → problem → remediation → a pull request (local-git review) for a human. The agent
 * only follows next_actions, polling with its session token and, once the fix is merged, with its
 * wallet signed in; the human only claims the organisation and registers the repository.
 */
describe("the agent journey (spec 1B)", () => {
  test("catalog → signup → telemetry → problem → remediation → pull request, paid with x402", async ({
    deps,
    app: _app,
  }) => {
    const chain = await startTestChain();
    try {
      const h = await telemetryHarness({ ...deps, payments: chain.payments }, investigationScript());
      const base = h.deps.config.baseUrl;
      const payer = await chain.fundedPayer(18, "20");
      const pay = payingFetch(h.app, chain.payments, payer.privateKey);
      const follow = (a: Action, headers: Record<string, string> = {}) =>
        (a.price === "free" ? appFetch(h.app) : pay)(a.href, {
          method: a.method,
          headers: {
            ...headers,
            ...(a.method === "POST" ? { "content-type": "application/json" } : {}),
            ...(a.x_assumed_state ? { "x-assumed-state": a.x_assumed_state } : {}),
          },
          ...(a.method === "POST" ? { body: JSON.stringify(a.body ?? {}) } : {}),
        });
      const before = await chain.balanceOf(payer.address);

      // 1. Discover.
      const catalog = await (await appFetch(h.app)(`${base}/x402`)).json();
      expect(catalog.items.map((i: { path: string }) => i.path)).toContain(
        "/x402/problems/{id}/remediations",
      );

      // 2. Sign up, then start onboarding as suggested.
      const signup = await (
        await pay(`${base}/x402/signup`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        })
      ).json();
      const session = await (await follow(signup.next_actions[0])).json();
      expect(session.state).toBe("awaiting-telemetry");

      // 3. Telemetry: the bug happens in production.
      const traceId = hexId(16);
      const span = jsonSpan({
        traceId,
        name: "GET /orders/:id",
        status: { code: 2 },
        events: [
          {
            name: "exception",
            timeUnixNano: (BigInt(Date.now()) * 1_000_000n).toString(),
            attributes: [
              { key: "exception.type", value: { stringValue: "OrderNotFoundError" } },
              { key: "exception.message", value: { stringValue: "order -123 not found" } },
              {
                key: "exception.stacktrace",
                value: {
                  stringValue:
                    "OrderNotFoundError: order -123 not found\n    at findOrder (/srv/shop/src/orders.js:9:11)\n    at parseOrderId (/srv/shop/src/order-id.js:3:10)",
                },
              },
            ],
          },
        ],
      });
      const ingest = await h.app.request("/v1/traces", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: signup.telemetry.headers.authorization,
        },
        body: JSON.stringify(jsonTraces([span])),
      });
      expect(ingest.status).toBe(200);

      // A human claims the organisation and registers the repository (agents never register paths).
      const poll = async () =>
        (
          await h.app.request(`/x402/onboard/${session.sessionId}`, {
            headers: { authorization: `Bearer ${session.sessionToken}` },
          })
        ).json();
      const operator = await eventually(async () => {
        const s = await poll();
        return s.state === "awaiting-operator" ? s : undefined;
      });
      const human = await newTenant(h.deps, h.app, "journey-operator@example.com");
      await givePassword(h.deps, "journey-operator@example.com");
      const browser = webClient(h.app);
      await browser.signIn("journey-operator@example.com", TEST_PASSWORD);
      const link = new URL(operator.approvalUrl);
      await browser.page(`${link.pathname}${link.search}`);
      expect((await browser.post("/approve", { token: link.searchParams.get("token") ?? "" })).status).toBe(
        303,
      );
      const steps = await poll();
      expect(steps).toMatchObject({
        state: "awaiting-operator",
        operatorSteps: [
          { step: "claim_organization", status: "done", done: true },
          { step: "install_app", status: "not_needed", done: true },
          { step: "select_repositories", status: "pending", done: false },
        ],
      });
      const operatorApi = await keyFor(h.deps, h.app, {
        organizationId: signup.organization.id,
        userId: human.userId,
      });
      const repo = makeGitRepo(fixtureFiles);
      const registered = await operatorApi.post(`/environments/${signup.environment.id}/repositories`, {
        provider: "local-git",
        path: repo.path,
        defaultBranch: "main",
        testCommand: "node --test",
        services: ["checkout"],
      });
      expect(registered.status, await registered.clone().text()).toBe(201);
      const setUp = await poll();
      expect(setUp.state).toBe("ready");
      // The guided shortcut is on offer for the problem the telemetry showed.
      expect(setUp.next_actions.map((a: Action) => a.action)).toEqual([
        "check_health",
        "list_problems",
        "resolve",
      ]);
      expect(setUp.next_actions[2]).toMatchObject({
        href: `${base}/x402/resolve`,
        price: "$5.00",
        body: { environmentId: signup.environment.id, problemId: expect.stringMatching(/^prb_/) },
      });

      // 4. Find the problem, inspect it, 5. remediate as suggested, and poll until the PR is ready.
      const problems = await eventually(async () => {
        const page = await (await pay(`${base}/x402/problems`)).json();
        return page.items.length ? page : undefined;
      });
      const problem = await (await follow(problems.next_actions[0])).json();
      expect(problem.title).toContain("OrderNotFoundError");
      const remediate: Action = problem.next_actions[0];
      expect(remediate.action).toBe("remediate");
      const started = await follow(remediate);
      expect(started.status, await started.clone().text()).toBe(201);
      const run = await started.json();
      expect(run).toMatchObject({
        status: "queued",
        threadUrl: `${base}/remediations/${run.remediationId}`,
        threadApiUrl: `${base}/x402/remediations/${run.remediationId}/thread`,
      });
      const ready = await eventually(async () => {
        const view = await (
          await follow(run.next_actions[0], { authorization: `Bearer ${session.sessionToken}` })
        ).json();
        if (["failed", "cancelled"].includes(view.status)) throw new Error(JSON.stringify(view));
        return view.status === "awaiting-review" ? view : undefined;
      }, 120_000);
      expect(ready.prUrl).toBe(`${base}/remediations/${run.remediationId}/review`);
      expect(ready.next_actions[0]).toMatchObject({ action: "request_review", href: ready.prUrl });

      expect(ready.problem).toMatchObject({ id: problem.id, status: "open" });
      // How sure patchbay is, from its own runs in the sandbox: the fixture's failing test shows
      // the problem on the default branch and passes with the fix.
      expect(ready.verification).toMatchObject({
        state: "reproduced-and-fixed",
        baseRun: { exitCode: 1 },
        branchRun: { exitCode: 0 },
        suiteRun: { exitCode: 0 },
      });

      // The human merges by hand. Days may pass: the session token expires, the wallet does not.
      // Signed in with it (no session token), the agent sees the run merged and its problem
      // resolved, and reads the run's thread, all for free.
      repo.git("merge", "-q", "--no-ff", "-m", "merge the fix", ready.branch);
      const asWallet = signingInFetch(h.app, chain.payments, payer.privateKey);
      const beforeReads = await chain.balanceOf(payer.address);
      const merged = await (await asWallet(run.next_actions[0].href)).json();
      expect(merged).toMatchObject({ status: "merged", problem: { id: problem.id, status: "resolved" } });
      // Merged, the problem is watched: the agent polls until the watch decides.
      expect(merged.watch).toMatchObject({ state: "watching", occurrences: [] });
      expect(merged.next_actions.map((a: Action) => a.action)).toEqual(["poll_remediation"]);
      const thread = await (await asWallet(run.threadApiUrl)).json();
      const kinds = thread.messages.map((m: { type: string }) => m.type);
      expect(kinds).toEqual(expect.arrayContaining(["created", "agent_step", "change_proposed", "merged"]));
      expect(thread.messages.find((m: { type: string }) => m.type === "agent_step").from).toBe("agent");
      expect(await chain.balanceOf(payer.address)).toBe(beforeReads);
      const resolved = await (await pay(`${base}/x402/problems/${problem.id}`)).json();
      expect(resolved).toMatchObject({
        status: "resolved",
        remediationId: run.remediationId,
        remediationState: "merged",
      });

      // Paid: signup + onboarding ($0.05 each), the reads ($0.01 each), the remediation ($5).
      const spent = before - (await chain.balanceOf(payer.address));
      expect(spent).toBeGreaterThanOrEqual(5_100_000n + 20_000n);
      expect((spent - 5_100_000n) % 10_000n).toBe(0n);
    } finally {
      await chain.close();
    }
  });
});
