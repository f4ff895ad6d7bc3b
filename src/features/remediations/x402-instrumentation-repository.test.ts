import { afterAll, vi } from "vitest";
import { describe, expect, newTenant } from "../../../test/fixtures.ts";
import { client, problem } from "../../../test/http.ts";
import { payingFetch, type TestChain } from "../../../test/lib/dev-chain.ts";
import {
  FULL_NAME,
  type GithubReplay,
  INSTALLATION_ID,
  INSTALLER_CODE,
  PR_NUMBER,
  replaySettings,
  startGithubReplay,
} from "../../../test/lib/github-replay.ts";
import { keyFor } from "../../../test/lib/members.ts";
import { jsonPost, type PaidApp, paidTest as test } from "../../../test/lib/paid-app.ts";
import {
  FIXED,
  fixtureFiles,
  type Harness,
  instrumentationScript,
  makeGitRepo,
  removeFixtureRepos,
  telemetryHarness,
} from "../../../test/lib/remediation.ts";
import { eventually } from "../../../test/lib/wait.ts";
import { signedInBrowser } from "../../../test/web.ts";
import { createApp } from "../../app.ts";
import { repositories } from "../../platform/db/schema/repositories.ts";
import { githubIntegration } from "../source-hosting/github/github-app.ts";

vi.setConfig({ testTimeout: 240_000 });

const INSTRUMENTATION = 2_000_000n; // $2

let replay: GithubReplay | undefined;
afterAll(async () => {
  removeFixtureRepos();
  await replay?.close();
});

/** The file's one harness (one worker): the GitHub App answered by a replay of a healthy repository. */
async function gitHubHarness(paid: PaidApp): Promise<Harness> {
  const h = await telemetryHarness(paid.deps, instrumentationScript());
  if (!replay) {
    replay = await startGithubReplay({
      repoPath: makeGitRepo({ ...fixtureFiles, "src/order-id.js": FIXED }).path,
    });
    h.services.github = githubIntegration(replaySettings(replay));
  }
  return h;
}

async function wallet(h: Harness, chain: TestChain, index: number) {
  const payer = await chain.fundedPayer(index, "10");
  const pay = payingFetch(h.app, chain.payments, payer.privateKey);
  const base = h.deps.config.baseUrl;
  const signup = await (await pay(`${base}/x402/signup`, jsonPost({}))).json();
  const session = await (await pay(`${base}/x402/onboard`, jsonPost({}))).json();
  const instrument = (body: unknown) => pay(`${base}/x402/instrumentation/pr`, jsonPost(body));
  const balance = () => chain.balanceOf(payer.address);
  return { privateKey: payer.privateKey, signup, session, instrument, balance };
}

type Step = { step: string; status: string; url?: string };
const states = (view: { operatorSteps: Step[] }) => view.operatorSteps.map((s) => [s.step, s.status]);
const stepOf = (view: { operatorSteps: Step[] }, name: string) =>
  view.operatorSteps.find((s) => s.step === name);

describe("POST /x402/instrumentation/pr naming a repository", () => {
  test("a malformed name is 400 invalid_repository_name, another organisation's repository 404, a name without a GitHub App 503 — none charged; the catalog shows the field", async ({
    paid,
    chain,
    stranger,
  }) => {
    const h = await gitHubHarness(paid);
    const agent = await wallet(h, chain, 13);
    const start = await agent.balance();

    for (const name of [
      "acme",
      "acme/checkout/extra",
      "acme/..",
      "/srv/git/checkout",
      "https://github.com/acme/x",
    ]) {
      const res = await agent.instrument({ service: "checkout", repository: name });
      expect(res.status, name).toBe(400);
      expect((await problem(res)).code, name).toBe("invalid_repository_name");
    }

    // Another organisation's registration, by its id: as unknown as an id that never existed.
    const theirs = await client(h.app, stranger.apiKey).post(
      `/environments/${stranger.environmentId}/repositories`,
      {
        provider: "local-git",
        path: makeGitRepo({ "README.md": "theirs\n" }).path,
        testCommand: "true",
        services: ["checkout"],
      },
    );
    expect(theirs.status, await theirs.clone().text()).toBe(201);
    const foreign = await agent.instrument({ service: "checkout", repository: (await theirs.json()).id });
    expect(foreign.status).toBe(404);
    expect((await problem(foreign)).code).toBe("not_found");
    const unknown = await agent.instrument({ service: "checkout", repository: "rep_0000000000000000000000" });
    expect(unknown.status).toBe(404);

    // Without a GitHub App an `owner/name` could never be connected: refused, not left waiting.
    // The same server otherwise (a model, a sandbox), so only the missing App can refuse it.
    const withoutGithub = createApp({ ...h.deps, remediation: { ...h.deps.remediation, github: undefined } });
    const noApp = await payingFetch(
      withoutGithub,
      chain.payments,
      agent.privateKey,
    )(`${paid.base}/x402/instrumentation/pr`, jsonPost({ service: "checkout", repository: FULL_NAME }));
    expect(noApp.status).toBe(503);
    expect((await problem(noApp)).code).toBe("provider_unavailable");
    expect(await agent.balance()).toBe(start);

    const catalog = await (await h.app.request("/x402")).json();
    const item = catalog.items.find((i: { path: string }) => i.path === "/x402/instrumentation/pr");
    expect(item.extensions.bazaar.info.input.body).toEqual({
      service: "checkout",
      repository: "acme/checkout",
    });
    const body = item.extensions.bazaar.schema.properties.input.properties.body;
    expect(body.properties.repository).toMatchObject({
      type: "string",
      pattern: expect.stringContaining("rep_"),
    });
    expect(body.required).toEqual(["service"]);
  });

  test("an owner/name not registered yet: the run waits, each human step moves on its own (claim → install → select), then the pull request awaits review", async ({
    paid,
    chain,
    stranger,
  }) => {
    const h = await gitHubHarness(paid);
    const agent = await wallet(h, chain, 14);
    // Another organisation has acme/checkout registered: that never makes it usable here.
    await h.deps.db.insert(repositories).values({
      id: "rep_theirs0acme0checkout0",
      organizationId: stranger.organizationId,
      environmentId: stranger.environmentId,
      provider: "github",
      installationId: 1,
      fullName: FULL_NAME,
      defaultBranch: "main",
      testCommand: "true",
      services: ["checkout"],
      createdBy: stranger.userId,
      createdAt: new Date(),
    });

    const before = await agent.balance();
    const res = await agent.instrument({ service: "checkout", repository: "Acme/Checkout" });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(await agent.balance()).toBe(before - INSTRUMENTATION);
    const started = await res.json();
    expect(started).toMatchObject({ status: "queued", service: "checkout", repository: "Acme/Checkout" });
    expect(states(started)).toEqual([
      ["claim_organization", "pending"],
      ["install_app", "upcoming"],
      ["select_repositories", "upcoming"],
      ["approve_change", "upcoming"],
      ["review_pull_request", "upcoming"],
    ]);
    // What happens is in next_actions: a human first (the claim link of the open session), then poll.
    const claimUrl = new URL(stepOf(started, "claim_organization")?.url ?? "");
    expect(claimUrl.pathname).toBe("/approve");
    expect(started.next_actions.map((a: { action: string }) => a.action)).toEqual([
      "request_operator_approval",
      "poll_remediation",
    ]);
    expect(started.next_actions[0].href).toBe(claimUrl.toString());
    expect(started.next_actions[0].description).toContain("claim_organization");

    const poll = async () =>
      (
        await h.app.request(`/x402/remediations/${started.remediationId}`, {
          headers: { authorization: `Bearer ${agent.session.sessionToken}` },
        })
      ).json();
    const waiting = await eventually(async () => {
      const run = await poll();
      return run.status === "awaiting-approval" ? run : undefined;
    });
    expect(waiting).toMatchObject({
      requestedRepository: "Acme/Checkout",
      repositoryId: null,
      approval: { kind: "repository_access", message: expect.stringContaining("Acme/Checkout") },
    });

    // 1. A human claims the organisation: installing is next, with GitHub's install link.
    const human = await newTenant(h.deps, h.app, "instrument-operator@example.com");
    const browser = await signedInBrowser(h.app, h.deps, human.userId);
    expect(await browser.page(`${claimUrl.pathname}${claimUrl.search}`)).toMatch(
      /data-step="claim_organization" data-status="pending"/,
    );
    const claimed = await browser.post("/approve", { token: claimUrl.searchParams.get("token") ?? "" });
    expect(claimed.status).toBe(303);
    const toInstall = await poll();
    expect(states(toInstall).slice(0, 3)).toEqual([
      ["claim_organization", "done"],
      ["install_app", "pending"],
      ["select_repositories", "upcoming"],
    ]);
    const install = new URL(stepOf(toInstall, "install_app")?.url ?? "");
    expect(`${install.origin}${install.pathname}`).toBe(
      "https://github.com/apps/patchbay-test/installations/new",
    );
    expect(toInstall.next_actions[0]).toMatchObject({
      action: "request_operator_approval",
      href: install.toString(),
    });

    // 2. They install the App through that link; GitHub sends them back and the installation is recorded.
    const callback = await browser.get(
      `/integrations/github/callback?${new URLSearchParams({
        code: INSTALLER_CODE,
        installation_id: String(INSTALLATION_ID),
        setup_action: "install",
        state: install.searchParams.get("state") ?? "",
      })}`,
    );
    expect(callback.status, await callback.clone().text()).toBe(200);
    const toSelect = await poll();
    expect(toSelect.status).toBe("awaiting-approval");
    expect(states(toSelect).slice(0, 3)).toEqual([
      ["claim_organization", "done"],
      ["install_app", "done"],
      ["select_repositories", "pending"],
    ]);
    const select = new URL(stepOf(toSelect, "select_repositories")?.url ?? "");
    expect(select.pathname).toBe(
      `/orgs/${agent.signup.organization.id}/environments/${agent.signup.environment.id}/repositories/new`,
    );
    expect(Object.fromEntries(select.searchParams)).toEqual({
      service: "checkout",
      provider: "github",
      fullName: "Acme/Checkout",
      installationId: String(INSTALLATION_ID),
    });
    expect(toSelect.next_actions[0].href).toBe(select.toString());
    const form = await browser.page(`${select.pathname}${select.search}`);
    expect(form).toContain('value="Acme/Checkout"');

    // 3. They select the repository (GitHub's own name for it): the run resumes by itself.
    const api = await keyFor(h.deps, h.app, {
      organizationId: agent.signup.organization.id,
      userId: human.userId,
    });
    const registered = await api.post(`/environments/${agent.signup.environment.id}/repositories`, {
      provider: "github",
      installationId: INSTALLATION_ID,
      fullName: FULL_NAME,
      testCommand: "node --test",
      services: ["instrumented"],
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    const ready = await eventually(async () => {
      const run = await poll();
      if (["failed", "cancelled"].includes(run.status)) throw new Error(JSON.stringify(run));
      return run.status === "awaiting-review" ? run : undefined;
    }, 180_000);
    const prUrl = `https://github.com/acme/checkout/pull/${PR_NUMBER}`;
    expect(ready).toMatchObject({ prUrl, repositoryId: (await registered.json()).id });
    expect(states(ready)).toEqual([
      ["claim_organization", "done"],
      ["install_app", "done"],
      ["select_repositories", "done"],
      ["approve_change", "not_needed"],
      ["review_pull_request", "pending"],
    ]);
    expect(stepOf(ready, "review_pull_request")?.url).toBe(prUrl);
    expect(ready.next_actions[0]).toMatchObject({ action: "request_review", href: prUrl });
    expect(
      replay?.requests.filter((r) => r.method === "POST" && r.path === "/repos/acme/checkout/pulls"),
    ).toHaveLength(1);
    expect(await agent.balance()).toBe(before - INSTRUMENTATION);
  });
});
