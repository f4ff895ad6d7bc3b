import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createApp } from "../src/app.ts";
import type { Deps } from "../src/deps.ts";
import { listen } from "../src/features/telemetry/test-support.ts";
import { describe, expect, test } from "./fixtures.ts";
import { startTestChain } from "./lib/dev-chain.ts";

const run = promisify(execFile);

describe("examples/agent.ts", () => {
  test("an agent with only a funded wallet discovers, signs up, onboards, sends telemetry, reaches the operator step and finds its problem", async ({
    deps,
  }) => {
    const chain = await startTestChain();
    let app: ReturnType<typeof createApp> | undefined;
    const server = await listen({ fetch: (request) => (app as NonNullable<typeof app>).fetch(request) });
    try {
      const served: Deps = {
        ...deps,
        payments: chain.payments,
        config: { ...deps.config, baseUrl: server.url },
      };
      app = createApp(served);
      const payer = await chain.fundedPayer(11, "1");
      const before = await chain.balanceOf(payer.address);
      const { stdout } = await run(process.execPath, ["examples/agent.ts"], {
        env: { ...process.env, PATCHBAY_URL: server.url, AGENT_PRIVATE_KEY: payer.privateKey },
        timeout: 60_000,
      });
      expect(stdout).toContain("signup → 201");
      expect(stdout).toContain("onboard → 201");
      expect(stdout).toContain("telemetry → 200");
      expect(stdout).toContain('"state": "awaiting-operator"');
      expect(stdout).toMatch(new RegExp(`${server.url}/approve\\?token=\\S+`));
      expect(stdout).toContain("OrderNotFoundError: order ord_<n> not found");
      // signup + onboarding ($0.05 each), then paid reads ($0.01 each) until the problem showed.
      const spent = before - (await chain.balanceOf(payer.address));
      expect(spent).toBeGreaterThanOrEqual(100_000n + 20_000n);
      expect((spent - 100_000n) % 10_000n).toBe(0n);
    } finally {
      await server.close();
      await chain.close();
    }
  });
});
