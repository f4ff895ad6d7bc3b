import { afterAll, vi } from "vitest";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { payingFetch, startTestChain } from "../../../test/lib/dev-chain.ts";
import { jsonPost } from "../../../test/lib/paid-app.ts";
import { removeFixtureRepos, telemetryHarness } from "../../../test/lib/remediation.ts";
import { hexId, jsonSpan, jsonTraces } from "../../../test/lib/telemetry.ts";
import { eventually } from "../../../test/lib/wait.ts";

vi.setConfig({ testTimeout: 120_000 });
afterAll(removeFixtureRepos);

const REMEDIATION = 5_000_000n; // $5

const failing = (type: string, message: string, at: number) =>
  jsonSpan({
    traceId: hexId(16),
    status: { code: 2 },
    events: [
      {
        name: "exception",
        timeUnixNano: (BigInt(at) * 1_000_000n).toString(),
        attributes: [
          { key: "exception.type", value: { stringValue: type } },
          { key: "exception.message", value: { stringValue: message } },
        ],
      },
    ],
  });

describe("POST /x402/resolve", () => {
  test("refused for free until telemetry and an open problem exist; then fixes the most recent problem no run works on", async ({
    deps,
  }) => {
    const chain = await startTestChain();
    try {
      // Each run stops at the repository approval (none registered): the model is never asked.
      const h = await telemetryHarness({ ...deps, payments: chain.payments }, []);
      const base = h.deps.config.baseUrl;
      const payer = await chain.fundedPayer(21, "20");
      const pay = payingFetch(h.app, chain.payments, payer.privateKey);
      const signup = await (await pay(`${base}/x402/signup`, jsonPost({}))).json();
      const resolve = (body: unknown = {}) => pay(`${base}/x402/resolve`, jsonPost(body));
      const balance = () => chain.balanceOf(payer.address);

      const start = await balance();
      const early = await resolve();
      expect(early.status).toBe(409);
      const refused = await early.json();
      expect(refused.code).toBe("telemetry_required");
      expect(refused.next_actions[0].action).toBe("send_telemetry");
      expect(await balance()).toBe(start);

      const now = Date.now();
      const sent = await h.app.request("/v1/traces", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: signup.telemetry.headers.authorization,
        },
        body: JSON.stringify(
          jsonTraces(
            [
              failing("OlderError", "seen first", now - 60_000),
              failing("NewerError", "seen last", now),
              jsonSpan(),
            ],
            "checkout",
          ),
        ),
      });
      expect(sent.status).toBe(200);

      const first = await eventually(async () => {
        const res = await resolve();
        return res.status === 201 ? res.json() : undefined;
      });
      expect(first).toMatchObject({
        status: "queued",
        threadUrl: `${base}/remediations/${first.remediationId}`,
        problem: { title: "NewerError: seen last", service: "checkout" },
        next_actions: [
          { action: "poll_remediation", href: `${base}/x402/remediations/${first.remediationId}` },
        ],
      });
      expect(await balance()).toBe(start - REMEDIATION);
      // What a human must do for it, step by step. Nobody owns the organisation and no onboarding
      // session gives a claim link yet, so the claim step says how to get one and nothing else waits.
      expect(first.operatorSteps.map((s: { step: string; status: string }) => [s.step, s.status])).toEqual([
        ["claim_organization", "pending"],
        ["install_app", "not_needed"],
        ["select_repositories", "upcoming"],
        ["approve_change", "upcoming"],
        ["review_pull_request", "upcoming"],
      ]);
      expect(first.operatorSteps[0].url).toBeUndefined();
      expect(first.operatorSteps[0].description).toContain("POST /x402/onboard");

      const second = await (await resolve()).json();
      expect(second.problem.title).toBe("OlderError: seen first");
      expect(await balance()).toBe(start - 2n * REMEDIATION);

      // Both problems have a run working on them: nothing left, and nothing charged.
      const none = await resolve();
      expect(none.status).toBe(409);
      const nothing = await none.json();
      expect(nothing.code).toBe("nothing_to_resolve");
      expect(nothing.next_actions.map((a: { action: string }) => a.action)).toEqual([
        "list_problems",
        "check_health",
      ]);
      // Naming a problem that already has a run is refused the same way, for free.
      const busy = await resolve({ problemId: first.problem.id });
      expect(busy.status).toBe(409);
      expect((await busy.json()).code).toBe("remediation_in_progress");
      // Unknown fields are 400 and never settle.
      const bad = await resolve({ problem: "x" });
      expect(bad.status).toBe(400);
      expect((await bad.json()).code).toBe("invalid_request");
      expect(await balance()).toBe(start - 2n * REMEDIATION);

      // The runs show on their problems.
      const problems = await (await pay(`${base}/x402/problems`)).json();
      expect(problems.items.map((p: { remediationId: string | null }) => p.remediationId).sort()).toEqual(
        [first.remediationId, second.remediationId].sort(),
      );
    } finally {
      await chain.close();
    }
  });
});
