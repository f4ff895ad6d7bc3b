import { afterAll } from "vitest";
import { describe, expect, newTenant, type Tenant, test } from "../../../../test/fixtures.ts";
import { client, problem } from "../../../../test/http.ts";
import {
  CLIENT_SECRET,
  FULL_NAME,
  type GithubReplay,
  INSTALLATION_ID,
  INSTALLER_CODE,
  OUTSIDER_CODE,
  replaySettings,
  startGithubReplay,
} from "../../../../test/lib/github-replay.ts";
import { remediationHarness } from "../../../../test/lib/remediation.ts";
import { signedInBrowser, type WebClient } from "../../../../test/web.ts";
import { githubInstallations } from "../../../platform/db/schema/repositories.ts";
import { memberships } from "../../../platform/db/schema/users.ts";
import { githubIntegration } from "./github-app.ts";

const replays: GithubReplay[] = [];
afterAll(async () => {
  await Promise.all(replays.map((r) => r.close()));
});

/**
 * The callback binds an installation to the organisation in the signed `state` only when the
 * GitHub user who comes back with it (the OAuth `code` GitHub adds when the App requests user
 * authorisation on install) can access that installation. A valid state of one's own
 * organisation plus a guessed installation id is not enough.
 */
async function setup(
  deps: Parameters<typeof remediationHarness>[0],
  signedIn: Tenant,
  opts: { clientSecret?: string } = {},
) {
  const h = await remediationHarness(deps, { worker: false });
  // Every test installs the replay's one installation: start each without an earlier binding.
  await deps.db.delete(githubInstallations);
  // No pushes happen here: the replay's repository is never read.
  const replay = await startGithubReplay({ repoPath: "/nonexistent" });
  replays.push(replay);
  h.services.github = githubIntegration(
    replaySettings(replay, { clientSecret: opts.clientSecret ?? CLIENT_SECRET }),
  );
  const stateOf = async (tenant: Tenant) => {
    const res = await client(h.app, tenant.apiKey).post("/integrations/github/install-links");
    const { url } = (await res.json()) as { url: string };
    return new URL(url).searchParams.get("state") ?? "";
  };
  // GitHub sends the installer's browser back: signed in to patchbay as `as` (the link's owner
  // unless said otherwise), or signed out.
  const browsers = new Map<string, WebClient>();
  const browserOf = async (tenant: Tenant): Promise<WebClient> => {
    const browser = browsers.get(tenant.userId) ?? (await signedInBrowser(h.app, deps, tenant.userId));
    browsers.set(tenant.userId, browser);
    return browser;
  };
  const callback = async (query: Record<string, string>, as?: Tenant | "signed-out") => {
    const path = `/integrations/github/callback?${new URLSearchParams(query)}`;
    if (as === "signed-out") return h.app.request(path);
    return (await browserOf(as ?? signedIn)).get(path);
  };
  const linkedRepos = (tenant: Tenant) =>
    client(h.app, tenant.apiKey).get(`/integrations/github/installations/${INSTALLATION_ID}/repositories`);
  return { h, replay, stateOf, callback, linkedRepos };
}

const installed = (state: string, code?: string) => ({
  ...(code === undefined ? {} : { code }),
  installation_id: String(INSTALLATION_ID),
  setup_action: "install",
  state,
});

describe("GitHub installation binding", () => {
  test("organisation A's own install link cannot bind organisation B's fresh installation", async ({
    deps,
    owner: victim,
    stranger: attacker,
  }) => {
    const { stateOf, callback, linkedRepos } = await setup(deps, victim);
    const victimState = await stateOf(victim);
    // The attacker only asks for a link of its own organisation; it installs nothing, and its
    // GitHub user (the outsider) cannot see the victim's installation.
    const attackerState = await stateOf(attacker);

    // Before the victim's browser comes back, the attacker calls the callback with the victim's
    // (guessable, sequential) installation id: without a code, then with its own user's code.
    const bare = await callback(installed(attackerState), attacker);
    expect(bare.status).toBe(400);
    expect((await problem(bare)).code).toBe("invalid_request");
    const hijack = await callback(installed(attackerState, OUTSIDER_CODE), attacker);
    expect(hijack.status).toBe(403);
    expect((await problem(hijack)).code).toBe("forbidden");
    const theirs = await linkedRepos(attacker);
    expect(theirs.status).toBe(404);
    expect(await theirs.text()).not.toContain(FULL_NAME);

    // The victim's own callback still links it, to the victim.
    const own = await callback(installed(victimState, INSTALLER_CODE));
    expect(own.status, await own.clone().text()).toBe(200);
    expect(await own.json()).toMatchObject({ organizationId: victim.organizationId, account: "acme" });
    expect(await (await linkedRepos(victim)).json()).toEqual({
      items: [{ fullName: FULL_NAME, defaultBranch: "main" }],
    });
  });

  test("a GitHub user who cannot access the installation gets 403 and nothing is bound", async ({
    deps,
    owner,
  }) => {
    const { replay, stateOf, callback, linkedRepos } = await setup(deps, owner);
    const res = await callback(installed(await stateOf(owner), OUTSIDER_CODE));
    expect(res.status).toBe(403);
    expect((await problem(res)).code).toBe("forbidden");
    expect((await linkedRepos(owner)).status).toBe(404);
    // The user's installations were asked with the user's token, not the App's.
    expect(replay.requests.filter((r) => r.path === "/user/installations").map((r) => r.auth)).toEqual([
      "token",
    ]);
  });

  test("a callback without a code is refused with 400 before GitHub is asked anything", async ({
    deps,
    owner,
  }) => {
    const { replay, stateOf, callback, linkedRepos } = await setup(deps, owner);
    const state = await stateOf(owner);
    for (const query of [installed(state), installed(state, "")]) {
      const res = await callback(query);
      expect(res.status).toBe(400);
      expect((await problem(res)).code).toBe("invalid_request");
    }
    expect(replay.requests).toEqual([]);
    expect((await linkedRepos(owner)).status).toBe(404);
  });

  test("an incorrect, expired or reused code is a 400, not a 500", async ({ deps, owner }) => {
    const { stateOf, callback, linkedRepos } = await setup(deps, owner);
    const wrong = await callback(installed(await stateOf(owner), "0000000000deadbeef00"));
    expect(wrong.status).toBe(400);
    expect((await problem(wrong)).code).toBe("invalid_request");
    expect((await linkedRepos(owner)).status).toBe(404);

    const first = await callback(installed(await stateOf(owner), INSTALLER_CODE));
    expect(first.status).toBe(200);
    const reused = await callback(installed(await stateOf(owner), INSTALLER_CODE));
    expect(reused.status).toBe(400);
    expect((await problem(reused)).code).toBe("invalid_request");
  });

  test("wrong client credentials are the operator's fault (503), and the secret is never logged", async ({
    deps,
    owner,
    logs,
  }) => {
    const secret = "wrong-client-secret-4f1a9c2e";
    const { stateOf, callback, linkedRepos } = await setup(deps, owner, { clientSecret: secret });
    const res = await callback(installed(await stateOf(owner), INSTALLER_CODE));
    expect(res.status).toBe(503);
    expect((await problem(res)).code).toBe("provider_unavailable");
    expect((await linkedRepos(owner)).status).toBe(404);
    expect(logs.text()).not.toContain(secret);
    expect(logs.text()).not.toContain(INSTALLER_CODE);
  });

  test("GitHub failing the exchange is a 500 whose log holds neither the client secret nor the code", async ({
    deps,
    owner,
    logs,
  }) => {
    const { replay, stateOf, callback, linkedRepos } = await setup(deps, owner);
    replay.outage.tokenExchange = true;
    const res = await callback(installed(await stateOf(owner), INSTALLER_CODE));
    expect(res.status).toBe(500);
    expect((await linkedRepos(owner)).status).toBe(404);
    expect(logs.text()).toContain("OAuth code exchange failed (HTTP 502)");
    expect(logs.text()).not.toContain(CLIENT_SECRET);
    expect(logs.text()).not.toContain(INSTALLER_CODE);
  });

  test("a forged state is refused before the code is spent", async ({ deps, owner }) => {
    const { replay, stateOf, callback } = await setup(deps, owner);
    const forged = await callback(installed("x", INSTALLER_CODE));
    expect(forged.status).toBe(404);
    expect(replay.requests).toEqual([]);
    expect((await callback(installed(await stateOf(owner), INSTALLER_CODE))).status).toBe(200);
  });
  test("a browser that comes back signed out is sent to sign in first, and nothing is asked or bound", async ({
    deps,
    owner,
  }) => {
    const { replay, stateOf, callback, linkedRepos } = await setup(deps, owner);
    const query = installed(await stateOf(owner), INSTALLER_CODE);
    const res = await callback(query, "signed-out");
    expect(res.status).toBe(303);
    const next = new URL(res.headers.get("location") ?? "", "http://x").searchParams.get("next");
    expect(next).toBe(`/integrations/github/callback?${new URLSearchParams(query)}`);
    expect(replay.requests).toEqual([]);
    expect((await linkedRepos(owner)).status).toBe(404);
    // Signed in, the same callback goes through (GitHub's code is still unspent).
    expect((await callback(query)).status).toBe(200);
  });

  test("a link handed to someone who does not manage its organisation cannot bind their installation to it", async ({
    deps,
    owner: victim,
    stranger: attacker,
  }) => {
    const { h, replay, stateOf, callback, linkedRepos } = await setup(deps, victim);
    // The attacker sends the victim its own organisation's link; the victim, who really can
    // access the installation on GitHub, installs through it and comes back signed in as itself.
    const res = await callback(installed(await stateOf(attacker), INSTALLER_CODE), victim);
    expect(res.status).toBe(403);
    expect((await problem(res)).code).toBe("forbidden");
    expect(replay.requests).toEqual([]); // refused before the code is spent
    expect((await linkedRepos(attacker)).status).toBe(404);
    // Nor may a plain member of the link's own organisation complete it.
    const member = await newTenant(deps, h.app);
    await deps.db
      .insert(memberships)
      .values({ organizationId: victim.organizationId, userId: member.userId, role: "member" });
    const asMember = await callback(installed(await stateOf(victim), INSTALLER_CODE), member);
    expect(asMember.status).toBe(403);
    expect(replay.requests).toEqual([]);
    expect((await linkedRepos(victim)).status).toBe(404);
  });
});
