import { afterAll, vi } from "vitest";
import { describe, expect, test } from "./fixtures.ts";
import { removeFixtureRepos } from "./lib/remediation.ts";
import { runExample } from "./lib/run-example-agent.ts";

vi.setConfig({ testTimeout: 180_000 });
afterAll(removeFixtureRepos);

/**
 * The example agent against a live server, the scripted model as its task agent: the operator
 * acts when the agent hands over a link (the onboarding session's, or the waiting run's), owning
 * the organisation and connecting the repository that serves the agent's service.
 */
describe("examples/agent.ts", () => {
  test("with guided onboarding: from the catalog to a pull request, polling with the session token", async ({
    deps,
  }) => {
    const { stdout, spent } = await runExample(deps, { onboarding: true, payerIndex: 11 });
    expect(stdout).toContain("onboard → 201");
    expect(stdout).toContain('"state": "awaiting-operator"');
    expect(stdout).toMatch(/\/approve\?token=\S+/);
    expect(stdout).toContain("polling with the session token");
    // signup + onboarding ($0.05 each), paid reads ($0.01 each) until the problem showed, the fix ($5).
    expect(spent).toBeGreaterThanOrEqual(100_000n + 20_000n + 5_000_000n);
    expect((spent - 5_100_000n) % 10_000n).toBe(0n);
  });
});
