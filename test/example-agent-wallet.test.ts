import { afterAll, vi } from "vitest";
import { describe, expect, test } from "./fixtures.ts";
import { removeFixtureRepos } from "./lib/remediation.ts";
import { runExample } from "./lib/run-example-agent.ts";

vi.setConfig({ testTimeout: 180_000 });
afterAll(removeFixtureRepos);

/**
 * The example agent without an onboarding session, as the specification's five steps run: it polls
 * its remediation signed in with the wallet (test/lib/run-example-agent.ts says why this is a file
 * of its own).
 */
describe("examples/agent.ts signed in with the wallet", () => {
  test("without onboarding: the five steps, polling its remediation to review signed in with the wallet", async ({
    deps,
  }) => {
    const { stdout, spent, signIns } = await runExample(deps, { onboarding: false, payerIndex: 12 });
    expect(stdout).not.toContain("onboard →");
    expect(stdout).toContain("polling signed in with the wallet (sign-in-with-x)");
    expect(stdout).toMatch(/remediation awaiting-approval[^\n]*\/remediations\/rem_\w+\/approval/);
    // Every poll after the start was a wallet sign-in: no session exists to poll with.
    expect(signIns).toBeGreaterThan(1);
    // signup ($0.05), paid reads ($0.01 each), the fix ($5); polling and the thread are free.
    expect(spent).toBeGreaterThanOrEqual(50_000n + 20_000n + 5_000_000n);
    expect((spent - 5_050_000n) % 10_000n).toBe(0n);
  });
});
