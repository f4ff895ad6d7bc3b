import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, vi } from "vitest";
import { describe, expect, test } from "../../../../test/fixtures.ts";
import { problem } from "../../../../test/http.ts";
import {
  BASE_SHA,
  CLIENT_ID,
  CLIENT_SECRET,
  FULL_NAME,
  type GithubReplay,
  INSTALLATION_ID,
  INSTALLER_CODE,
  PR_NUMBER,
  pullRequestClosed,
  replaySettings,
  startGithubReplay,
} from "../../../../test/lib/github-replay.ts";
import {
  FIXED,
  investigationScript,
  PROBLEM_ID,
  type RunView,
  remediationHarness,
  removeFixtureRepos,
  waitForRun,
} from "../../../../test/lib/remediation.ts";
import { scriptedModel } from "../../../../test/lib/scripted-model.ts";
import { signedInBrowser } from "../../../../test/web.ts";
import { GITHUB_APP_PERMISSIONS, githubAppManifest } from "./app-manifest.ts";
import { githubIntegration } from "./github-app.ts";

// Runs do real work (git, a sandboxed test suite, a job queue): give them room on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

const replays: GithubReplay[] = [];
afterAll(async () => {
  removeFixtureRepos();
  await Promise.all(replays.map((r) => r.close()));
});

describe("GitHub provider against recorded GitHub API responses", () => {
  test("install link → callback → register → run → draft pull request → signed webhook marks it merged", async ({
    deps,
    owner,
    stranger,
  }) => {
    const h = await remediationHarness(deps);
    const { api, repo } = h.forTenant(owner);
    const replay = await startGithubReplay({ repoPath: repo.path });
    replays.push(replay);
    const sent = (method: string, path: string) =>
      replay.requests
        .filter((r) => r.method === method && r.path === path)
        .map((r) => r.body as Record<string, unknown>);
    h.services.github = githubIntegration(replaySettings(replay));
    h.setModel(scriptedModel(investigationScript()).model);

    // A person installs and authorises the App through the organisation's link; GitHub calls back
    // with the state and a code for that person.
    const link = (await (await api.post("/integrations/github/install-links")).json()) as { url: string };
    expect(link.url).toMatch(/^https:\/\/github\.com\/apps\/patchbay-test\/installations\/new\?state=/);
    const state = new URL(link.url).searchParams.get("state") ?? "";
    // GitHub sends the person's browser back, signed in to patchbay.
    const browser = await signedInBrowser(h.app, deps, owner.userId);
    const forged = await browser.get(
      `/integrations/github/callback?code=${INSTALLER_CODE}&installation_id=${INSTALLATION_ID}&state=x`,
    );
    expect(forged.status).toBe(404);
    const callback = await browser.get(
      `/integrations/github/callback?code=${INSTALLER_CODE}&installation_id=${INSTALLATION_ID}&setup_action=install&state=${encodeURIComponent(state)}`,
    );
    expect(callback.status, await callback.clone().text()).toBe(200);
    expect(await callback.json()).toMatchObject({ organizationId: owner.organizationId, account: "acme" });
    // The code was exchanged with the App's client, and the user's own installations were read.
    expect(sent("POST", "/login/oauth/access_token")).toEqual([
      expect.objectContaining({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, code: INSTALLER_CODE }),
    ]);
    expect(replay.requests.some((r) => r.path === "/user/installations" && r.auth === "token")).toBe(true);

    // Repository selection happened on GitHub; the organisation sees it and registers one.
    const selectable = await api.get(`/integrations/github/installations/${INSTALLATION_ID}/repositories`);
    expect(await selectable.json()).toEqual({ items: [{ fullName: FULL_NAME, defaultBranch: "main" }] });
    const githubBody = {
      provider: "github",
      installationId: INSTALLATION_ID,
      fullName: FULL_NAME,
      testCommand: "node --test",
      services: ["checkout"],
    };
    const theirs = await h
      .forTenant(stranger)
      .api.post(`/environments/${stranger.environmentId}/repositories`, githubBody);
    expect((await problem(theirs)).code).toBe("installation_required");
    h.forTenant(owner);
    const registered = await api.post(`/environments/${owner.environmentId}/repositories`, githubBody);
    expect(registered.status, await registered.clone().text()).toBe(201);
    expect(await registered.json()).toMatchObject({
      provider: "github",
      fullName: FULL_NAME,
      defaultBranch: "main",
    });

    const started = (await (
      await api.post(`/environments/${owner.environmentId}/problems/${PROBLEM_ID}/remediations`, {})
    ).json()) as RunView;
    const run = await waitForRun(api, owner.environmentId, started.id);
    expect(run.status, JSON.stringify(run.events, null, 2)).toBe("awaiting-review");
    expect(run.prUrl).toBe(`https://github.com/acme/checkout/pull/${PR_NUMBER}`);
    expect(run.baseCommit).toBe(BASE_SHA);

    // What patchbay sent GitHub: the fixed file as a blob, a tree on the base, one commit, a new branch, a draft PR.
    expect(sent("POST", "/repos/acme/checkout/git/blobs")).toEqual([{ content: FIXED, encoding: "utf-8" }]);
    expect(sent("POST", "/repos/acme/checkout/git/trees")).toEqual([
      expect.objectContaining({
        base_tree: "691272480426f78a0138979dd3ce63b77f706feb",
        tree: [
          {
            path: "src/order-id.js",
            mode: "100644",
            type: "blob",
            sha: "3a0f86fb8db8eea7ccbb9a95f325ddbedfb25e15",
          },
        ],
      }),
    ]);
    expect(sent("POST", "/repos/acme/checkout/git/commits")).toEqual([
      expect.objectContaining({ parents: [BASE_SHA] }),
    ]);
    expect(sent("POST", "/repos/acme/checkout/git/refs")).toEqual([
      { ref: `refs/heads/patchbay/${run.id}`, sha: "7044a8a032e85b6ab611033b2ac8af7ce85805b2" },
    ]);
    expect(sent("POST", "/repos/acme/checkout/pulls")).toEqual([
      expect.objectContaining({ head: `patchbay/${run.id}`, base: "main", draft: true }),
    ]);
    // Never a merge, never a force-moved ref, never anything but GET and POST.
    expect(replay.requests.filter((r) => /merge/i.test(r.path))).toEqual([]);
    expect(new Set(replay.requests.map((r) => r.method))).toEqual(new Set(["GET", "POST"]));
    expect(
      replay.requests.some((r) => r.path === `/app/installations/${INSTALLATION_ID}/access_tokens`),
    ).toBe(true);

    // Webhooks: a bad signature is refused and changes nothing; a signed "closed, merged" ends the run.
    const hook = (d: ReturnType<typeof pullRequestClosed>) =>
      h.app.request("/integrations/github/webhook", { method: "POST", headers: d.headers, body: d.body });
    const bad = await hook(
      pullRequestClosed({ branch: `patchbay/${run.id}`, merged: true, secret: "wrong" }),
    );
    expect(bad.status).toBe(401);
    expect((await problem(bad)).code).toBe("invalid_webhook_signature");
    expect((await waitForRun(api, owner.environmentId, run.id)).status).toBe("awaiting-review");
    const other = await hook(pullRequestClosed({ branch: "feature/x", merged: true }));
    expect(await other.json()).toEqual({ received: true, remediations: [] });
    const merged = await hook(pullRequestClosed({ branch: `patchbay/${run.id}`, merged: true }));
    expect(merged.status).toBe(202);
    expect(await merged.json()).toEqual({ received: true, remediations: [run.id] });
    const done = await waitForRun(api, owner.environmentId, run.id, ["merged"]);
    expect(done.events.at(-1)).toMatchObject({ type: "merged", status: "merged" });
  });

  test("pushing the same change again reuses the branch; a closed, unmerged pull request is reported as closed", async ({
    deps,
    owner,
  }) => {
    const h = await remediationHarness(deps);
    const { repo } = h.forTenant(owner);
    const replay = await startGithubReplay({ repoPath: repo.path });
    replays.push(replay);
    const github = githubIntegration(replaySettings(replay));
    const row = {
      id: "rep_x",
      provider: "github" as const,
      installationId: INSTALLATION_ID,
      fullName: FULL_NAME,
      defaultBranch: "main",
      path: null,
      organizationId: owner.organizationId,
      environmentId: owner.environmentId,
      testCommand: "node --test",
      services: ["checkout"],
      createdBy: "usr_x",
      createdAt: new Date(),
    };
    const change = {
      remediationId: "rem_again",
      baseCommit: BASE_SHA,
      files: [{ path: "src/order-id.js", content: FIXED }],
      message: "fix",
    };
    const first = await github.host.pushChange(row, change);
    const again = await github.host.pushChange(row, change);
    expect(again).toEqual(first);
    expect(replay.requests.filter((r) => r.method === "POST" && r.path.endsWith("/git/refs"))).toHaveLength(
      1,
    );
    const outcome = await github.receiveWebhook({
      id: "1",
      name: "pull_request",
      ...signed(pullRequestClosed({ branch: "patchbay/rem_again", merged: false })),
    });
    expect(outcome).toMatchObject({
      merged: false,
      branch: "patchbay/rem_again",
      installationId: INSTALLATION_ID,
    });
  });
});

function signed(d: ReturnType<typeof pullRequestClosed>) {
  return { signature: d.headers["x-hub-signature-256"], body: d.body };
}

describe("patchbay never merges", () => {
  test("the App asks for contents, pull requests and metadata only — never administration or workflows", () => {
    expect(GITHUB_APP_PERMISSIONS).toEqual({ contents: "write", pull_requests: "write", metadata: "read" });
    const manifest = githubAppManifest("https://patchbay.example.com");
    expect(Object.keys(manifest.default_permissions)).not.toContain("administration");
    expect(Object.keys(manifest.default_permissions)).not.toContain("workflows");
  });

  test("the App requests user authorization on install, so the callback gets a code to check the installer", () => {
    const manifest = githubAppManifest("https://patchbay.example.com");
    expect(manifest).toMatchObject({
      request_oauth_on_install: true,
      callback_urls: ["https://patchbay.example.com/integrations/github/callback"],
    });
    // With user authorization on install GitHub ignores a setup URL; one here would only mislead.
    expect(manifest).not.toHaveProperty("setup_url");
  });

  test("no source file calls a merge endpoint or runs git merge", () => {
    const root = fileURLToPath(new URL("../../../", import.meta.url));
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) {
          const text = readFileSync(path, "utf8");
          if (
            /\/pulls\/\{pull_number\}\/merge|\/merges\b|pulls\.merge|repos\.merge|mergePullRequest|"merge",|\["merge"/.test(
              text,
            )
          ) {
            offenders.push(path);
          }
        }
      }
    };
    walk(root);
    expect(offenders).toEqual([]);
  });
});
