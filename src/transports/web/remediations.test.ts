import { generateKeyPairSync } from "node:crypto";
import { afterAll, vi } from "vitest";
import { describe, expect, newTenant, test } from "../../../test/fixtures.ts";
import { client } from "../../../test/http.ts";
import {
  FIXED,
  type Harness,
  investigationScript,
  PROBLEM_ID,
  remediationHarness,
  removeFixtureRepos,
  waitForRun,
} from "../../../test/lib/remediation.ts";
import { call, scriptedModel } from "../../../test/lib/scripted-model.ts";
import { givePassword, TEST_PASSWORD, type WebClient, webClient } from "../../../test/web.ts";
import { githubIntegration } from "../../features/source-hosting/github/github-app.ts";
import { memberships } from "../../platform/db/schema/users.ts";

// Runs do real work (git, a sandboxed test suite, a job queue): give them room on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });
afterAll(removeFixtureRepos);

type Signed = { browser: WebClient; tenant: Awaited<ReturnType<typeof newTenant>> };

/** A new organisation whose owner is signed in to the web UI of the harness's app. */
async function ownerOf(h: Harness, email: string): Promise<Signed & { env: string }> {
  const tenant = await newTenant(h.deps, h.app, email);
  await givePassword(h.deps, email);
  const browser = webClient(h.app);
  expect((await browser.signIn(email, TEST_PASSWORD)).status).toBe(303);
  return { tenant, browser, env: `/orgs/${tenant.organizationId}/environments/${tenant.environmentId}` };
}

/** A person with the plain member role in `owner`'s organisation, signed in. */
async function memberOf(h: Harness, owner: Signed["tenant"], email: string): Promise<WebClient> {
  const other = await newTenant(h.deps, h.app, email);
  await h.deps.db
    .insert(memberships)
    .values({ organizationId: owner.organizationId, userId: other.userId, role: "member" });
  await givePassword(h.deps, email);
  const browser = webClient(h.app);
  await browser.signIn(email, TEST_PASSWORD);
  return browser;
}

const registerForm = (path: string, extra: Record<string, string> = {}) => ({
  provider: "local-git",
  path,
  defaultBranch: "main",
  testCommand: "node --test",
  services: "checkout",
  ...extra,
});

/** Starts a run through the form the problem pages post, returning the run's id. */
async function startRun(browser: WebClient, env: string): Promise<string> {
  await browser.page(`${env}/remediations`);
  const res = await browser.post(`${env}/problems/${PROBLEM_ID}/remediations`);
  expect(res.status, await res.clone().text()).toBe(303);
  const location = res.headers.get("location") ?? "";
  expect(location).toMatch(/^\/remediations\/rem_[0-9a-z]+$/);
  return location.slice("/remediations/".length);
}

describe("repository pages", () => {
  test("register (validation messages from the REST schema), list, delete with confirmation; members read only", async ({
    deps,
  }) => {
    const h = await remediationHarness(deps);
    const { browser, env, tenant } = await ownerOf(h, "repo-owner@example.com");
    const { repo } = h.forTenant(tenant);
    const list = `${env}/repositories`;
    expect(await browser.page(list)).toContain("No repository is registered in this environment yet.");
    await browser.page(`${list}/new`);

    const missing = await browser.post(
      `${list}/new`,
      registerForm(repo.path, { testCommand: "", services: "" }),
    );
    expect(missing.status).toBe(400);
    const missingPage = await missing.text();
    expect(missingPage).toMatch(/id="f-testCommand-error">/);
    expect(missingPage).toMatch(/id="f-services-error">/);
    expect(missingPage).toContain(`value="${repo.path}"`);

    const relative = await browser.post(`${list}/new`, registerForm("srv/checkout"));
    expect(relative.status).toBe(422);
    expect(await relative.text()).toMatch(/id="f-path-error">The path must be absolute\./);

    const notGit = await browser.post(`${list}/new`, registerForm("/tmp"));
    expect(notGit.status).toBe(422);
    expect(await notGit.text()).toMatch(/id="f-path-error">/);

    // CSRF: a form without its token, or from another site, changes nothing.
    expect((await browser.post(`${list}/new`, registerForm(repo.path), { csrf: false })).status).toBe(403);
    expect(
      (await browser.post(`${list}/new`, registerForm(repo.path), { origin: "https://evil.example" })).status,
    ).toBe(403);

    const created = await browser.post(`${list}/new`, registerForm(repo.path));
    expect(created.status, await created.clone().text()).toBe(303);
    expect(created.headers.get("location")).toBe(`${list}?done=created`);
    const listed = await browser.page(`${list}?done=created`);
    expect(listed).toContain(`<code>${repo.path}</code>`);
    expect(listed).toContain("<code>checkout</code>");
    expect(listed).toContain('aria-current="page">Repositories</a>');

    const again = await browser.post(`${list}/new`, registerForm(repo.path));
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("already registered in this environment");

    // A member sees the list but no forms, and the verbs refuse them.
    const member = await memberOf(h, tenant, "repo-member@example.com");
    const memberList = await member.page(list);
    expect(memberList).toContain(`<code>${repo.path}</code>`);
    expect(memberList).not.toContain("Register a repository");
    await member.page(`${list}/new`, 403);
    const repositoryId = /repositories\/(rep_[0-9a-z]+)\/delete/.exec(listed)?.[1] ?? "";
    expect(repositoryId).not.toBe("");
    expect((await member.post(`${list}/${repositoryId}/delete`)).status).toBe(403);

    const confirm = await browser.page(`${list}/${repositoryId}/delete`);
    expect(confirm).toContain("Delete this registration?");
    const deleted = await browser.post(`${list}/${repositoryId}/delete`);
    expect(deleted.headers.get("location")).toBe(`${list}?done=deleted`);
    expect(await browser.page(`${list}?done=deleted`)).toContain("No repository is registered");

    // With the GitHub App configured: the install link, and GitHub's fields with the verb's refusals.
    h.services.github = githubIntegration({
      appId: "1029384",
      privateKey: generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({
        type: "pkcs8",
        format: "pem",
      }) as string,
      webhookSecret: "s".repeat(32),
      clientId: "Iv1.test",
      clientSecret: "test-secret",
      slug: "patchbay-test",
      apiUrl: "http://127.0.0.1:9",
      webUrl: "https://github.com",
    });
    try {
      const withApp = await browser.page(list);
      expect(withApp).toMatch(
        /href="https:\/\/github\.com\/apps\/patchbay-test\/installations\/new\?state=[^"]+">Install the GitHub App<\/a>/,
      );
      expect(await member.page(list)).not.toContain("Install the GitHub App");
      await browser.page(`${list}/new`);
      const badName = await browser.post(`${list}/new`, {
        provider: "github",
        installationId: "41234567",
        fullName: "not a repo",
        testCommand: "npm test",
        services: "payments",
      });
      expect(badName.status).toBe(400);
      expect(await badName.text()).toMatch(/id="f-fullName-error">must be owner\/name/);
      const unlinked = await browser.post(`${list}/new`, {
        provider: "github",
        installationId: "41234567",
        fullName: "acme/checkout",
        testCommand: "npm test",
        services: "payments",
      });
      expect(unlinked.status).toBe(409);
      expect(await unlinked.text()).toMatch(
        /id="f-installationId-error">This GitHub App installation is not linked/,
      );
    } finally {
      h.services.github = undefined;
    }

    // Without a model, starting is refused with a page that says what to do (the verb's 503).
    h.deps.languageModel = undefined;
    await browser.page(`${env}/remediations`);
    const refused = await browser.post(`${env}/problems/${PROBLEM_ID}/remediations`);
    expect(refused.status).toBe(503);
    const refusedPage = await refused.text();
    expect(refusedPage).toContain("The remediation could not start");
    expect(refusedPage).toContain("<code>model_not_configured</code>");
  });
});

describe("remediation pages", () => {
  test("a run to awaiting-review: run page, review diff (escaped), tenancy, roles, sign-in redirect", async ({
    deps,
  }) => {
    const h = await remediationHarness(deps);
    const { browser, env, tenant } = await ownerOf(h, "run-owner@example.com");
    const { api, repo } = h.forTenant(tenant);
    const hostile = "<script>alert(1)</script>";
    // The agent first searches for markup (a progress message), and its fix carries markup too.
    h.setModel(
      scriptedModel([
        call("search_files", { query: hostile }),
        ...investigationScript({ fix: `${FIXED}// ${hostile}\n` }),
      ]).model,
    );
    await browser.page(`${env}/repositories/new`);
    expect((await browser.post(`${env}/repositories/new`, registerForm(repo.path))).status).toBe(303);

    // Members may not start runs.
    const member = await memberOf(h, tenant, "run-member@example.com");
    await member.page(`${env}/remediations`);
    expect((await member.post(`${env}/problems/${PROBLEM_ID}/remediations`)).status).toBe(403);
    // The token is checked before anything starts.
    expect(
      (await browser.post(`${env}/problems/${PROBLEM_ID}/remediations`, {}, { csrf: false })).status,
    ).toBe(403);

    const id = await startRun(browser, env);
    const first = await browser.page(`/remediations/${id}`);
    expect(first).toContain("Fixing: Error: order -123 not found");
    expect(first).toMatch(/<meta http-equiv="refresh" content="3">/);

    const run = await waitForRun(api, tenant.environmentId, id, ["awaiting-review", "failed"]);
    expect(run.status, JSON.stringify(run.events, null, 2)).toBe("awaiting-review");
    const page = await browser.page(`/remediations/${id}`);
    expect(page).toContain('data-status="awaiting-review"');
    expect(page).toContain(`href="/remediations/${id}/review">Review the fix</a>`);
    expect(page).toContain(`<code>patchbay/${id}</code>`);
    expect(page).toContain("Tests passed");
    // How sure the run is: the failing run on the default branch, the passing one on the branch.
    expect(page).toContain('data-verification="reproduced-and-fixed"');
    expect(page).toContain("On the default branch (base commit and the test only)");
    expect(page).toContain("<code>node --test &#39;test/order-id.test.js&#39;</code> exited <code>1</code>");
    expect(page).not.toContain("Cancel run");
    expect(page).toMatch(/<meta http-equiv="refresh" content="30">/);
    // The progress message naming the markup is text.
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page).not.toContain(hostile);

    const review = await browser.page(`/remediations/${id}/review`);
    expect(review).toContain('data-verification="reproduced-and-fixed"');
    expect(review).toContain('<span class="add">+  return Number(id.slice(&quot;ORD-&quot;.length));</span>');
    expect(review).toContain('<span class="del">-  return Number(id.slice(3));</span>');
    expect(review).toContain("<code>src/order-id.js</code>");
    expect(review).toContain(`git merge --no-ff patchbay/${id}`);
    expect(review).toContain("patchbay never merges");
    expect(review).toContain('<span class="add">+// &lt;script&gt;alert(1)&lt;/script&gt;</span>');
    expect(review).not.toContain(hostile);

    // The run list names the problem.
    const runs = await browser.page(`${env}/remediations`);
    expect(runs).toContain(`href="/remediations/${id}"`);
    expect(runs).toContain("Error: order -123 not found");

    // A member of the organisation reads the pages but gets no buttons.
    const memberView = await member.page(`/remediations/${id}`);
    expect(memberView).toContain('data-status="awaiting-review"');
    await member.page(`/remediations/${id}/review`);

    // Another organisation's member, an unknown id and a malformed one: the same 404.
    const stranger = await ownerOf(h, "run-stranger@example.com");
    for (const path of [
      `/remediations/${id}`,
      `/remediations/${id}/review`,
      `/remediations/${id}/approval`,
    ]) {
      const res = await stranger.browser.get(path);
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toContain("order -123");
    }
    const unknown = await stranger.browser.get("/remediations/rem_0000000000000000000000000");
    expect(unknown.status).toBe(404);
    expect((await stranger.browser.get("/remediations/..%2Forgs")).status).toBe(404);
    expect((await stranger.browser.post(`/remediations/${id}/cancel`)).status).toBe(404);

    // Signed out: to sign-in and back.
    const anonymous = webClient(h.app);
    const redirect = await anonymous.get(`/remediations/${id}/review`);
    expect(redirect.status).toBe(303);
    expect(redirect.headers.get("location")).toBe(
      `/login?next=${encodeURIComponent(`/remediations/${id}/review`)}`,
    );

    // Merged by hand: the run page says so.
    repo.git("merge", "--no-ff", "-q", "-m", "merge fix", `patchbay/${id}`);
    expect(await browser.page(`/remediations/${id}`)).toContain('data-status="merged"');
  });

  test("a high-risk change is approved from the approval page and proceeds; repository access links to registration", async ({
    deps,
  }) => {
    const h = await remediationHarness(deps);
    const { browser, env, tenant } = await ownerOf(h, "approve-owner@example.com");
    const { api, repo } = h.forTenant(tenant);
    const script = investigationScript();
    h.setModel(
      scriptedModel([
        ...script.slice(0, 7),
        call("write_file", {
          path: "test/order-id.test.js",
          content: 'import { test } from "node:test";\ntest("ok", () => {});\n',
        }),
        ...script.slice(7),
      ]).model,
    );

    // No repository yet: the run waits for access, and the approval page says how to give it.
    const id = await startRun(browser, env);
    await waitForRun(api, tenant.environmentId, id, ["awaiting-approval"]);
    const proposedPath = `/environments/${tenant.environmentId}/remediations/${id}/proposed-change`;
    const none = await api.get(proposedPath);
    expect(none.status).toBe(404);
    expect(await none.json()).toMatchObject({ code: "not_found", remediationStatus: "awaiting-approval" });
    const access = await browser.page(`/remediations/${id}/approval`);
    expect(access).toContain("The run needs repository access");
    expect(access).toContain(`href="${env}/repositories/new?service=checkout"`);
    expect(access).not.toContain(">Approve</button>");
    const prefilled = await browser.page(`${env}/repositories/new?service=checkout`);
    expect(prefilled).toMatch(/name="services" type="text" value="checkout"/);
    expect((await browser.post(`${env}/repositories/new`, registerForm(repo.path))).status).toBe(303);

    // It resumes, and then waits again: the agent edited an existing test.
    const waiting = await waitForRun(api, tenant.environmentId, id, ["awaiting-approval"]);
    expect(waiting.approval?.kind).toBe("high_risk_change");
    const runPage = await browser.page(`/remediations/${id}`);
    expect(runPage).toContain(`href="/remediations/${id}/approval">Review and approve</a>`);
    const approval = await browser.page(`/remediations/${id}/approval`);
    expect(approval).toContain("Approve a high-risk change?");
    expect(approval).toContain("edits the existing test test/order-id.test.js");
    expect(approval).toContain("<code>test/order-id.test.js</code>");
    expect(approval).toContain('<span class="add">+test(&quot;ok&quot;, () =&gt; {});</span>');

    // The same change through the API, for an approver who does not use the web UI.
    const proposed = await api.get(proposedPath);
    expect(proposed.status).toBe(200);
    const change = (await proposed.json()) as {
      status: string;
      files: { path: string; deleted: boolean }[];
      diff: string;
      risk: { high: boolean; reasons: string[] };
    };
    expect(change.status).toBe("awaiting-approval");
    expect(change.files).toContainEqual({ path: "test/order-id.test.js", deleted: false });
    expect(change.diff).toContain('+test("ok", () => {});');
    expect(change.risk.high).toBe(true);
    expect(change.risk.reasons.join(" ")).toContain("test/order-id.test.js");
    // Another organisation's key learns nothing about the run.
    const stranger = await newTenant(h.deps, h.app, "approve-stranger@example.com");
    const foreign = await client(h.app, stranger.apiKey).get(proposedPath);
    expect(foreign.status).toBe(404);
    expect(await foreign.text()).not.toContain("order-id");

    const member = await memberOf(h, tenant, "approve-member@example.com");
    const memberPage = await member.page(`/remediations/${id}/approval`);
    expect(memberPage).not.toContain(">Approve</button>");
    expect((await member.post(`/remediations/${id}/approval`)).status).toBe(403);
    expect((await browser.post(`/remediations/${id}/approval`, {}, { csrf: false })).status).toBe(403);

    await browser.page(`/remediations/${id}/approval`);
    const approved = await browser.post(`/remediations/${id}/approval`);
    expect(approved.status).toBe(303);
    expect(approved.headers.get("location")).toBe(`/remediations/${id}?done=approved`);
    const done = await waitForRun(api, tenant.environmentId, id, ["awaiting-review", "failed"]);
    expect(done.status).toBe("awaiting-review");
    expect(await browser.page(`/remediations/${id}/approval`)).toContain("Nothing waits for approval");
    // Approving twice is the verb's refusal, on a page.
    const twice = await browser.post(`/remediations/${id}/approval`);
    expect(twice.status).toBe(409);
    expect(await twice.text()).toContain("there is nothing to approve");
  });

  test("reject cancels a waiting run", async ({ deps }) => {
    const h = await remediationHarness(deps);
    const { browser, env, tenant } = await ownerOf(h, "reject-owner@example.com");
    const { api } = h.forTenant(tenant);
    h.setModel(scriptedModel(investigationScript()).model);
    const id = await startRun(browser, env);
    await waitForRun(api, tenant.environmentId, id, ["awaiting-approval"]);
    const waiting = await browser.page(`/remediations/${id}`);
    expect(waiting).toContain(`href="/remediations/${id}/approval">What to do</a>`);
    expect(waiting).toMatch(/<meta http-equiv="refresh" content="10">/);
    expect(waiting).toContain("Cancel run");
    const nothing = await browser.get(`/remediations/${id}/review`);
    expect(nothing.status).toBe(404);
    expect(await nothing.text()).toContain("Nothing to review yet");
    const member = await memberOf(h, tenant, "reject-member@example.com");
    await member.page(`/remediations/${id}`);
    expect((await member.post(`/remediations/${id}/cancel`)).status).toBe(403);
    expect((await member.post(`/remediations/${id}/rejection`)).status).toBe(403);
    await browser.page(`/remediations/${id}/approval`);
    const rejected = await browser.post(`/remediations/${id}/rejection`);
    expect(rejected.headers.get("location")).toBe(`/remediations/${id}?done=rejected`);
    const page = await browser.page(`/remediations/${id}?done=rejected`);
    expect(page).toContain('data-status="cancelled"');
    expect(page).not.toContain('http-equiv="refresh"');
    expect(page).toContain("Start a new run for this problem");
  });
});
