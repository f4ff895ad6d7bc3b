import { spawn } from "node:child_process";
import { eq } from "drizzle-orm";
import { afterAll, vi } from "vitest";
import type { createApp } from "../src/app.ts";
import { organizations } from "../src/platform/db/schema/organizations.ts";
import { memberships } from "../src/platform/db/schema/users.ts";
import { describe, expect, newTenant, test } from "./fixtures.ts";
import { listen } from "./http.ts";
import { startTestChain } from "./lib/dev-chain.ts";
import { keyFor } from "./lib/members.ts";
import {
  fixtureFiles,
  investigationScript,
  makeGitRepo,
  removeFixtureRepos,
  telemetryHarness,
} from "./lib/remediation.ts";
import { eventually } from "./lib/wait.ts";

vi.setConfig({ testTimeout: 180_000 });
afterAll(removeFixtureRepos);

describe("examples/agent.ts", () => {
  test("an agent with only a funded wallet goes from the catalog to a pull request, the operator acting when asked", async ({
    deps,
  }) => {
    const chain = await startTestChain();
    let app: ReturnType<typeof createApp> | undefined;
    const server = await listen({ fetch: (request) => (app as NonNullable<typeof app>).fetch(request) });
    try {
      const h = await telemetryHarness(
        { ...deps, payments: chain.payments, config: { ...deps.config, baseUrl: server.url } },
        investigationScript(),
      );
      app = h.app;
      const payer = await chain.fundedPayer(11, "10");
      const before = await chain.balanceOf(payer.address);

      const child = spawn(process.execPath, ["examples/agent.ts"], {
        env: {
          ...process.env,
          PATCHBAY_URL: server.url,
          AGENT_PRIVATE_KEY: payer.privateKey,
          AGENT_WAIT_SECONDS: "150",
        },
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
      });
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));

      // The operator acts once the agent hands over the approval link: they own the organisation
      // and connect the repository that serves the agent's service.
      await eventually(async () => (stdout.includes("/approve?token=") ? true : undefined), 90_000);
      const [org] = await h.deps.db
        .select({ id: organizations.id })
        .from(organizations)
        .where(eq(organizations.walletAddress, payer.address.toLowerCase()));
      if (!org) throw new Error(`no organisation for ${payer.address}:\n${stdout}`);
      const human = await newTenant(h.deps, h.app, "example-operator@example.com");
      await h.deps.db
        .insert(memberships)
        .values({ organizationId: org.id, userId: human.userId, role: "owner" });
      const api = await keyFor(h.deps, h.app, { organizationId: org.id, userId: human.userId });
      const envs = await (await api.get("/environments")).json();
      const repo = makeGitRepo(fixtureFiles);
      const registered = await api.post(`/environments/${envs.items[0].id}/repositories`, {
        provider: "local-git",
        path: repo.path,
        defaultBranch: "main",
        testCommand: "node --test",
        services: ["example-agent"],
      });
      expect(registered.status, await registered.clone().text()).toBe(201);

      expect(await exited, `${stdout}\n${stderr}`).toBe(0);
      expect(stdout).toContain("signup → 201");
      expect(stdout).toContain("onboard → 201");
      expect(stdout).toContain("telemetry → 200");
      expect(stdout).toContain('"state": "awaiting-operator"');
      expect(stdout).toMatch(new RegExp(`${server.url}/approve\\?token=\\S+`));
      expect(stdout).toContain("OrderNotFoundError: order <id> not found");
      expect(stdout).toContain("remediate → 201");
      const prUrl = /pull request ready for a human[^\n]*?(http\S+\/review)/.exec(stdout)?.[1];
      expect(prUrl, stdout).toMatch(new RegExp(`^${server.url}/remediations/rem_\\w+/review$`));
      const branch = /remediations\/(rem_\w+)\/review/.exec(prUrl ?? "")?.[1];
      expect(repo.git("branch", "--list", `patchbay/${branch}`)).toContain(`patchbay/${branch}`);
      // signup + onboarding ($0.05 each), paid reads ($0.01 each) until the problem showed, the fix ($5).
      const spent = before - (await chain.balanceOf(payer.address));
      expect(spent).toBeGreaterThanOrEqual(100_000n + 20_000n + 5_000_000n);
      expect((spent - 5_100_000n) % 10_000n).toBe(0n);
    } finally {
      await server.close();
      await chain.close();
    }
  });
});
