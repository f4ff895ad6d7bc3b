// examples/agent.ts run as a child process against a live server on its own dev chain, the
// scripted model as its task agent; the operator acts when the agent hands over a link. One test
// per file: each run registers a remediation worker on its file's queue, and a worker left from
// an earlier run in the same file would take the next run's job with its spent script.
import { spawn } from "node:child_process";
import { count, eq, isNotNull } from "drizzle-orm";
import type { createApp } from "../../src/app.ts";
import type { Deps } from "../../src/deps.ts";
import { organizations } from "../../src/platform/db/schema/organizations.ts";
import { siwxNonces } from "../../src/platform/db/schema/siwx-nonces.ts";
import { memberships } from "../../src/platform/db/schema/users.ts";
import { expect, newTenant } from "../fixtures.ts";
import { listen } from "../http.ts";
import { startTestChain } from "./dev-chain.ts";
import { keyFor } from "./members.ts";
import { fixtureFiles, investigationScript, makeGitRepo, telemetryHarness } from "./remediation.ts";
import { eventually } from "./wait.ts";

export async function runExample(deps: Deps, opts: { onboarding: boolean; payerIndex: number }) {
  const chain = await startTestChain();
  let app: ReturnType<typeof createApp> | undefined;
  const server = await listen({ fetch: (request) => (app as NonNullable<typeof app>).fetch(request) });
  try {
    const h = await telemetryHarness(
      { ...deps, payments: chain.payments, config: { ...deps.config, baseUrl: server.url } },
      investigationScript(),
    );
    app = h.app;
    const payer = await chain.fundedPayer(opts.payerIndex, "10");
    const before = await chain.balanceOf(payer.address);
    const [usedBefore] = await h.deps.db
      .select({ n: count() })
      .from(siwxNonces)
      .where(isNotNull(siwxNonces.usedAt));
    const signInsBefore = usedBefore?.n ?? 0;

    const child = spawn(process.execPath, ["examples/agent.ts"], {
      env: {
        ...process.env,
        PATCHBAY_URL: server.url,
        AGENT_PRIVATE_KEY: payer.privateKey,
        AGENT_WAIT_SECONDS: "150",
        AGENT_ONBOARDING: opts.onboarding ? "on" : "off",
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

    // The operator acts once the agent hands over a link: they own the organisation and connect
    // the repository that serves the agent's service.
    const handedOver = opts.onboarding ? /\/approve\?token=/ : /\/remediations\/rem_\w+\/approval/;
    await eventually(async () => (handedOver.test(stdout) ? true : undefined), 90_000);
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
    expect(stdout).toContain("telemetry → 200");
    expect(stdout).toContain("OrderNotFoundError: order <id> not found");
    expect(stdout).toContain("remediate → 201");
    const prUrl = /pull request ready for a human[^\n]*?(http\S+\/review)/.exec(stdout)?.[1];
    expect(prUrl ?? stdout).toMatch(new RegExp(`^${server.url}/remediations/rem_\\w+/review$`));
    const branch = /remediations\/(rem_\w+)\/review/.exec(prUrl ?? "")?.[1];
    expect(repo.git("branch", "--list", `patchbay/${branch}`)).toContain(`patchbay/${branch}`);
    // How sure patchbay is: the example's telemetry names another file than the fixture's test
    // fails in, so the test the agent names is refused as a reproduction, and the agent says so.
    expect(stdout).toMatch(/verification: (reproduced-and-fixed|fixed-without-reproduction)/);
    // The run's thread, read as JSON after the pull request: the agent's steps among the messages.
    expect(stdout).toMatch(/thread: \d+ messages/);
    expect(stdout).toContain("agent agent_step:");
    const [used] = await h.deps.db
      .select({ n: count() })
      .from(siwxNonces)
      .where(isNotNull(siwxNonces.usedAt));
    return {
      stdout,
      spent: before - (await chain.balanceOf(payer.address)),
      signIns: (used?.n ?? 0) - signInsBefore,
    };
  } finally {
    await server.close();
    await chain.close();
  }
}
