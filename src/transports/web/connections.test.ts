import { describe, expect, newTenant, test } from "../../../test/fixtures.ts";
import { client } from "../../../test/http.ts";
import { echoTool } from "../../../test/lib/mcp-servers.ts";
import { givePassword, TEST_PASSWORD, type WebClient, webClient } from "../../../test/web.ts";
import type { Deps } from "../../deps.ts";

type AppLike = Parameters<typeof webClient>[0];

async function ownerBrowser(app: AppLike, deps: Deps, email: string) {
  const tenant = await newTenant(deps, app as never, email);
  await givePassword(deps, email);
  const browser = webClient(app);
  expect((await browser.signIn(email, TEST_PASSWORD)).status).toBe(303);
  const list = `/orgs/${tenant.organizationId}/environments/${tenant.environmentId}/connections`;
  return { tenant, browser, list };
}

/** The connection page's path from a create redirect. */
async function create(browser: WebClient, list: string, fields: Record<string, string>): Promise<string> {
  await browser.page(`${list}/new`);
  const res = await browser.post(`${list}/new`, fields);
  expect(res.status, await res.clone().text()).toBe(303);
  const location = res.headers.get("location") ?? "";
  expect(location).toMatch(/\/connections\/mcp_[0-9a-z]+\?done=created$/);
  return location.replace("?done=created", "");
}

const revisionOf = (page: string): string => /name="revision" value="(\d+)"/.exec(page)?.[1] ?? "";

describe("connection pages", () => {
  test("create names every error at once in people's words, and the display name defaults to the alias", async ({
    app,
    deps,
  }) => {
    const { browser, list } = await ownerBrowser(app, deps, "c-errors@example.com");
    await browser.page(`${list}/new`);
    const bad = await browser.post(`${list}/new`, {
      displayName: "  ",
      alias: "",
      endpointUrl: "https://user:pw@mcp.example.com/mcp",
      authKind: "api_key",
      headerName: "",
    });
    expect(bad.status).toBe(400);
    const page = await bad.text();
    // Alias, endpoint and header name together, on the first submit; no validator jargon.
    expect(page).toContain('id="f-alias-error">must be 1–40 lowercase letters');
    expect(page).toContain('id="f-endpointUrl-error">credentials in the URL are not allowed</p>');
    expect(page).toContain('id="f-headerName-error">Enter a value.</p>');
    expect(page).not.toMatch(/Too small|expected string|Invalid input/);
    expect(page).not.toContain('id="f-displayName-error"');
    const summary = /<div class="alert error"[\s\S]*?<\/div>/.exec(page)?.[0] ?? "";
    expect(summary).toContain('href="#f-alias"');
    expect(summary).toContain('href="#f-endpointUrl"');
    expect(summary).toContain('href="#f-headerName"');

    // An empty display name is the alias, as `patchbay environment mcp create` has it.
    const path = await create(browser, list, {
      displayName: "",
      alias: "runbooks",
      endpointUrl: "https://mcp.example.com/mcp",
      authKind: "none",
    });
    const created = await browser.page(path);
    expect(created).toContain("<title>runbooks · patchbay</title>");
    expect(created).toContain("No authentication");
  });

  test("create shows the API's validation messages next to the fields", async ({ app, deps }) => {
    const { browser, list } = await ownerBrowser(app, deps, "c1@example.com");
    await browser.page(`${list}/new`);
    const bad = await browser.post(`${list}/new`, {
      displayName: "Runbooks",
      alias: "Not An Alias",
      endpointUrl: "https://mcp.example.com/mcp",
      authKind: "none",
    });
    expect(bad.status).toBe(400);
    const page = await bad.text();
    expect(page).toMatch(
      /id="f-alias" name="alias" type="text" value="Not An Alias"[^>]*aria-invalid="true" aria-describedby="f-alias-hint f-alias-error"/,
    );
    expect(page).toContain("must be 1–40 lowercase letters");
    const url = await browser.post(`${list}/new`, {
      displayName: "Runbooks",
      alias: "runbooks",
      endpointUrl: "http://mcp.example.com/mcp?x=1",
      authKind: "none",
    });
    expect(url.status).toBe(400);
    expect(await url.text()).toContain('id="f-endpointUrl-error">must start with https://</p>');
    const header = await browser.post(`${list}/new`, {
      displayName: "Runbooks",
      alias: "runbooks",
      endpointUrl: "https://mcp.example.com/mcp",
      authKind: "api_key",
      headerName: "Authorization",
    });
    expect(header.status).toBe(400);
    expect(await header.text()).toContain('id="f-headerName-error"');
    await create(browser, list, {
      displayName: "Runbooks",
      alias: "runbooks",
      endpointUrl: "https://mcp.example.com/mcp",
      authKind: "none",
    });
    const taken = await browser.post(`${list}/new`, {
      displayName: "Again",
      alias: "runbooks",
      endpointUrl: "https://mcp.example.com/mcp",
      authKind: "none",
    });
    expect(taken.status).toBe(409);
    expect(await taken.text()).toMatch(/id="f-alias-error">A connection with alias/);
  });

  test("credential, discovery, approval and enablement, with limits counted on the list", async ({
    app,
    deps,
    mcp,
  }) => {
    const server = await mcp.start({
      auth: { kind: "bearer", token: "right-token" },
      tools: [
        echoTool("search_runbooks", { title: "Search runbooks", annotations: { readOnlyHint: true } }),
        echoTool("get_page", { annotations: {} }),
        echoTool("too_wordy", { description: "x".repeat(5000) }),
      ],
    });
    const { browser, list } = await ownerBrowser(app, deps, "c2@example.com");
    const path = await create(browser, list, {
      displayName: "Runbooks",
      alias: "runbooks",
      endpointUrl: server.url,
      authKind: "bearer",
    });
    let page = await browser.page(`${path}?done=created`);
    expect(page).toContain("Credential missing");
    expect(page).toContain("Attach a credential</a>.");

    const wrong = await browser.post(`${path}/credential`, {
      revision: revisionOf(page),
      value: "wrong-token",
    });
    expect(wrong.status).toBe(422);
    const wrongPage = await wrong.text();
    expect(wrongPage).toMatch(/id="f-value-error">127\.0\.0\.1:\d+ refused the credential \(HTTP 401\)\./);
    expect(wrongPage).not.toContain("wrong-token");
    const right = await browser.post(`${path}/credential`, {
      revision: revisionOf(page),
      value: "right-token",
    });
    expect(right.headers.get("location")).toBe(`${path}?done=credential_set`);
    page = await browser.page(`${path}?done=credential_set`);
    expect(page).not.toContain("right-token");
    expect(page).toContain("Approval missing");

    const discovered = await browser.post(`${path}/discover`, { revision: revisionOf(page) });
    expect(discovered.headers.get("location")).toBe(`${path}?done=discovered#tools`);
    page = await browser.page(`${path}?done=discovered`);
    expect(page).toContain("3 tools found");
    expect(page).toMatch(/<strong>search_runbooks<\/strong> — Search runbooks/);
    // Annotations are badges; the raw hints are in the tool's details.
    expect(page).toMatch(/<span class="badge hint-ok" title="readOnlyHint: true">read-only<\/span>/);
    expect(page).toMatch(/name="toolNames" value="too_wordy" disabled/);
    // Access classes: a read-only annotated tool is read; one without annotations is write, with a
    // box to attest that it only reads.
    expect(page).toMatch(
      /<strong>search_runbooks<\/strong>[\s\S]*?<span class="badge ready"[^>]*>Read<\/span>/,
    );
    expect(page).toMatch(/name="attestReadOnly" value="get_page">/);
    expect(page).not.toMatch(/name="attestReadOnly" value="search_runbooks"/);
    const discoveryId = /name="discoveryId" value="(dsc_[0-9a-z]+)"/.exec(page)?.[1] ?? "";

    const none = await browser.post(`${path}/approve`, { revision: revisionOf(page), discoveryId });
    expect(none.status).toBe(400);
    expect(await none.text()).toContain("Select at least one tool to approve.");
    const forced = await browser.post(`${path}/approve`, {
      revision: revisionOf(page),
      discoveryId,
      toolNames: ["too_wordy"],
    });
    expect(forced.status).toBe(422);
    expect(await forced.text()).toContain("These tools cannot be approved: too_wordy");
    const approved = await browser.post(`${path}/approve`, {
      revision: revisionOf(page),
      discoveryId,
      toolNames: ["search_runbooks", "get_page"],
      attestReadOnly: ["get_page"],
    });
    expect(approved.status).toBe(303);
    page = await browser.page(`${path}?done=approved`);
    expect(page).toContain("Disabled");
    expect(page).toMatch(/name="toolNames" value="search_runbooks" checked/);
    expect(page).toMatch(/name="attestReadOnly" value="get_page" checked/);
    expect(page).toContain("2 (2 read, 0 write)");

    expect(
      (await browser.post(`${path}/enablement`, { revision: revisionOf(page), enabled: "true" })).status,
    ).toBe(303);
    page = await browser.page(path);
    expect(page).toContain('<span class="badge ready">Ready</span>');
    const listPage = await browser.page(list);
    expect(listPage).toMatch(/Ready connections<\/span><br><strong>1<\/strong> \/ 8/);
    expect(listPage).toMatch(/Ready tools<\/span><br><strong>2<\/strong> \/ 64/);
  });

  test("a form from before another change is refused as a revision conflict, explained", async ({
    app,
    deps,
  }) => {
    const { browser, list } = await ownerBrowser(app, deps, "c3@example.com");
    const path = await create(browser, list, {
      displayName: "Docs",
      alias: "docs",
      endpointUrl: "https://mcp.example.com/mcp",
      authKind: "none",
    });
    const stale = await browser.page(path);
    // Another tab renames it.
    expect(
      (
        await browser.post(`${path}/update`, {
          revision: revisionOf(stale),
          displayName: "Docs 2",
          authKind: "none",
        })
      ).status,
    ).toBe(303);
    const res = await browser.post(`${path}/update`, {
      revision: revisionOf(stale),
      displayName: "Docs 3",
      authKind: "none",
    });
    expect(res.status).toBe(412);
    const page = await res.text();
    expect(page).toContain("This connection changed since you loaded this page");
    expect(page).toContain("you saw revision 1; it is now\n  revision 2");
    expect(page).toContain(`<a href="${path}">Reload the page</a>`);
    expect(page).toContain("Docs 2");
  });

  test("endpoint changes need a disabled connection; deletion previews its effects and needs the receipt", async ({
    app,
    deps,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [echoTool("one")] });
    const { browser, list } = await ownerBrowser(app, deps, "c4@example.com");
    const path = await create(browser, list, {
      displayName: "One",
      alias: "one",
      endpointUrl: server.url,
      authKind: "none",
    });
    let page = await browser.page(path);
    await browser.post(`${path}/discover`, { revision: revisionOf(page) });
    page = await browser.page(path);
    const discoveryId = /name="discoveryId" value="(dsc_[0-9a-z]+)"/.exec(page)?.[1] ?? "";
    await browser.post(`${path}/approve`, { revision: revisionOf(page), discoveryId, toolNames: "one" });
    page = await browser.page(path);
    await browser.post(`${path}/enablement`, { revision: revisionOf(page), enabled: "true" });
    page = await browser.page(path);
    expect(page).toContain("Disable the connection before deleting it.");
    const blocked = await browser.post(`${path}/update`, {
      revision: revisionOf(page),
      displayName: "One",
      endpointUrl: `${server.origin}/other`,
      authKind: "none",
    });
    expect(blocked.status).toBe(409);
    const blockedPage = await blocked.text();
    expect(blockedPage).toContain("Disable the connection before changing its endpoint or authentication.");
    expect(blockedPage).toContain(`value="${server.origin}/other"`); // the form keeps what was typed

    // Disabling asks first: the first post answers the confirmation and changes nothing.
    const asked = await browser.post(`${path}/enablement`, { revision: revisionOf(page), enabled: "false" });
    expect(asked.status).toBe(200);
    expect(await asked.text()).toContain("Disable One?");
    expect(await browser.page(path)).toContain("Enabled: new tasks");
    await browser.post(`${path}/enablement`, {
      revision: revisionOf(page),
      enabled: "false",
      confirmed: "yes",
    });
    page = await browser.page(path);
    const preview = await browser.post(`${path}/deletion-preview`, { revision: revisionOf(page) });
    expect(preview.status).toBe(200);
    const confirm = await preview.text();
    expect(confirm).toContain("Delete One?");
    expect(confirm).toContain("1 approved tool is removed with it.");
    expect(confirm).toContain("It has no stored credential.");
    expect(confirm).toContain("No running task uses it.");
    const receipt = /name="receipt" value="(dlr_[0-9a-z]+)"/.exec(confirm)?.[1] ?? "";
    const forged = await browser.post(`${path}/delete`, {
      revision: revisionOf(page),
      receipt: "dlr_forged",
    });
    expect(forged.status).toBe(409);
    expect(await forged.text()).toContain("preview again");
    const deleted = await browser.post(`${path}/delete`, { revision: revisionOf(page), receipt });
    expect(deleted.headers.get("location")).toBe(`${list}?done=deleted`);
    expect(await browser.page(`${list}?done=deleted`)).toContain("The connection was deleted.");
    expect((await browser.get(path)).status).toBe(404);
  });

  test("tenancy: another organisation's environment, a malformed id and a foreign organisation are 404", async ({
    app,
    deps,
    stranger,
  }) => {
    const { tenant, browser } = await ownerBrowser(app, deps, "c5@example.com");
    for (const path of [
      `/orgs/${tenant.organizationId}/environments/${stranger.environmentId}/connections`,
      `/orgs/${tenant.organizationId}/environments/not-a-uuid/connections`,
      `/orgs/${stranger.organizationId}/environments/${stranger.environmentId}/connections`,
      `/orgs/${tenant.organizationId}/environments/${tenant.environmentId}/connections/mcp_nope`,
      `/orgs/${tenant.organizationId}/nonsense`,
    ]) {
      const res = await browser.get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type"), path).toMatch(/^text\/html/);
    }
    await browser.page(`/orgs/${tenant.organizationId}/members`);
    const post = await browser.post(
      `/orgs/${tenant.organizationId}/environments/${stranger.environmentId}/connections/new`,
      {
        displayName: "X",
        alias: "x",
        endpointUrl: "https://mcp.example.com/mcp",
        authKind: "none",
      },
    );
    expect(post.status).toBe(404);
    expect(
      await client(app, stranger.apiKey)
        .get(`/environments/${stranger.environmentId}/mcp-connections`)
        .then((r) => r.json()),
    ).toMatchObject({ items: [] });
  });
});

describe("API key pages", () => {
  test("keys are shown once, never offer the MCP permissions, and revoke at once", async ({ app, deps }) => {
    const { tenant, browser } = await ownerBrowser(app, deps, "k1@example.com");
    const base = `/orgs/${tenant.organizationId}/api-keys`;
    const page = await browser.page(base);
    expect(page).toContain('value="environments:read"');
    expect(page).not.toContain('value="mcp_connections:read"');
    expect(page).not.toContain('value="mcp_connections:manage"');

    const crafted = await browser.post(base, {
      name: "sneaky",
      permissions: ["environments:read", "mcp_connections:manage"],
    });
    expect(crafted.status).toBe(400);
    expect(await crafted.text()).toContain("Not offered here: mcp_connections:manage");

    const created = await browser.post(base, { name: "CI deploys", permissions: ["environments:read"] });
    expect(created.status).toBe(201);
    const secret =
      /<code class="secret" id="new-key">(sk_[0-9a-z]+)<\/code>/.exec(await created.text())?.[1] ?? "";
    expect(secret).toMatch(/^sk_/);
    const me = await client(app, secret).get("/me");
    expect(await me.json()).toMatchObject({
      user: { id: tenant.userId },
      permissions: ["environments:read"],
    });
    const listed = await browser.page(base);
    expect(listed).toContain("CI deploys");
    expect(listed).not.toContain(secret);

    const row = listed.split("<tr>").find((r) => r.includes("CI deploys")) ?? "";
    const keyId = /\/api-keys\/(key_[0-9a-z]+)\/revoke"/.exec(row)?.[1] ?? "";
    const revoked = await browser.post(`${base}/${keyId}/revoke`);
    expect(revoked.headers.get("location")).toBe(`${base}?done=revoked`);
    expect((await client(app, secret).get("/me")).status).toBe(401);
  });
});

describe("members see no management pages", () => {
  test("a member gets the 403 page for connections and keys", async ({ app, deps }) => {
    const { tenant, browser } = await ownerBrowser(app, deps, "m1@example.com");
    const members = `/orgs/${tenant.organizationId}/members`;
    await browser.page(members);
    const invited = await browser.post(`${members}/invite`, { email: "reader@example.com", role: "member" });
    const link = /invitations\/accept\?token=(pbi_[0-9a-z]+)/.exec(await invited.text())?.[1] ?? "";
    const reader = webClient(app);
    await reader.page(`/invitations/accept?token=${link}`);
    await reader.post("/invitations/accept", {
      token: link,
      password: "reader password 1",
      confirm: "reader password 1",
    });
    const list = `/orgs/${tenant.organizationId}/environments/${tenant.environmentId}/connections`;
    for (const path of [list, `${list}/new`, `/orgs/${tenant.organizationId}/api-keys`]) {
      const res = await reader.get(path);
      expect(res.status, path).toBe(403);
      expect(await res.text(), path).toContain("Only an owner or administrator");
    }
  });
});
