import { describe, expect, newTenant } from "../fixtures.ts";
import { echoTool } from "../lib/mcp-servers.ts";
import { haveChromium, screenshot, signIn, webTest as test } from "../lib/web-ui.ts";
import { givePassword, TEST_PASSWORD } from "../web.ts";

/**
 * The connection pages in a real browser against a real patchbay and a real MCP server:
 * everything an owner does with a connection, through the forms only.
 */

const title = haveChromium
  ? "connection pages in Chromium"
  : "connection pages in Chromium (skipped: no /usr/bin/chromium)";

describe.skipIf(!haveChromium)(title, () => {
  test("an owner creates, credentials, discovers (with progress), approves a subset and enables", async ({
    web,
    deps,
    app,
    mcp,
  }) => {
    const server = await mcp.start({
      auth: { kind: "bearer", token: "s3cret-token-value" },
      tools: [
        echoTool("search_runbooks", {
          title: "Search runbooks",
          annotations: { readOnlyHint: true, openWorldHint: false },
        }),
        echoTool("get_page", { description: "Reads one runbook page by its id." }),
        echoTool("too_wordy", { description: "x".repeat(5000) }),
      ],
    });
    const owner = await newTenant(deps, app, "ui-owner@example.com");
    await givePassword(deps, "ui-owner@example.com");
    const page = await web.newPage();
    await signIn(page, "ui-owner@example.com", TEST_PASSWORD);
    const list = `/orgs/${owner.organizationId}/environments/${owner.environmentId}/connections`;
    expect(new URL(page.url()).pathname).toBe(list);
    expect(await page.locator(".meter").allInnerTexts()).toEqual([
      "Ready connections\n0 / 8",
      "Ready tools\n0 / 64",
    ]);

    await page.getByRole("link", { name: "New connection" }).click();
    await page.getByLabel("Display name").fill("Runbooks");
    await page.getByLabel("Alias").fill("Run Books");
    await page.getByLabel("Endpoint URL").fill(server.url);
    await page.getByLabel("Authentication").selectOption("bearer");
    await page.getByRole("button", { name: "Create connection" }).click();
    await page.locator("#f-alias-error").waitFor();
    expect(await page.locator("#f-alias-error").innerText()).toContain("lowercase letters");
    expect(await page.getByLabel("Alias").getAttribute("aria-invalid")).toBe("true");
    expect(await page.getByLabel("Display name").inputValue()).toBe("Runbooks");
    await screenshot(page, "new-connection");
    await page.getByLabel("Alias").fill("runbooks");
    await page.getByRole("button", { name: "Create connection" }).click();
    await page.waitForURL(/\/connections\/mcp_[0-9a-z]+\?done=created$/);
    expect(await page.locator(".badge").first().innerText()).toBe("Credential missing");

    const credential = page.getByLabel("Bearer token");
    expect(await credential.getAttribute("type")).toBe("password");
    expect(await credential.getAttribute("autocomplete")).toBe("off");
    await credential.fill("wrong-token");
    await page.getByRole("button", { name: "Set credential" }).click();
    await page.locator("#f-value-error").waitFor();
    expect(await page.locator("#f-value-error").innerText()).toContain("refused the credential");
    await page.getByLabel("Bearer token").fill("s3cret-token-value");
    await page.getByRole("button", { name: "Set credential" }).click();
    await page.waitForURL(/done=credential_set/);
    expect(await page.content()).not.toContain("s3cret-token-value");
    expect(await page.getByLabel("Bearer token").inputValue()).toBe("");

    // While the server works, the form says what is going on and cannot be sent twice. What the
    // page showed at submit time is noted in sessionStorage, which outlives the navigation.
    await page.evaluate(() =>
      document.addEventListener("submit", (event) => {
        const form = event.target as HTMLFormElement;
        const status = form.querySelector("[role=status]");
        const button = form.querySelector("button");
        sessionStorage.setItem(
          "busy",
          JSON.stringify({ text: status?.textContent, disabled: button?.disabled }),
        );
      }),
    );
    await page.getByRole("button", { name: "Discover tools" }).click();
    await page.waitForURL(/done=discovered/);
    const busy = JSON.parse((await page.evaluate(() => sessionStorage.getItem("busy"))) ?? "null");
    expect(busy).toEqual({ text: "Connecting to the server and listing its tools…", disabled: true });
    expect(await page.getByRole("status").first().innerText()).toContain("Discovery finished");
    const rows = page.locator("table tbody tr");
    expect(await rows.count()).toBe(3);
    expect(await page.getByLabel("search_runbooks — Search runbooks").isEnabled()).toBe(true);
    expect(await page.getByLabel("too_wordy").isDisabled()).toBe(true);
    expect(await rows.filter({ hasText: "too_wordy" }).innerText()).toMatch(/Not approvable: /);
    expect(await rows.filter({ hasText: "search_runbooks" }).locator(".badge").allInnerTexts()).toEqual([
      "read-only",
      "closed world",
      "Read",
    ]);
    await rows.filter({ hasText: "get_page" }).locator("summary").click();
    expect(await rows.filter({ hasText: "get_page" }).locator("pre").first().innerText()).toContain(
      '"type": "object"',
    );

    await page.getByLabel("search_runbooks — Search runbooks").check();
    await page.getByRole("button", { name: "Approve selected tools" }).click();
    await page.waitForURL(/done=approved/);
    expect(await page.getByLabel("search_runbooks — Search runbooks").isChecked()).toBe(true);
    expect(await page.getByLabel("get_page").isChecked()).toBe(false);
    await page.getByRole("button", { name: "Enable", exact: true }).click();
    await page.waitForURL(/done=enabled/);
    expect(await page.locator("h1 .badge").innerText()).toBe("Ready");
    await screenshot(page, "connection");

    await page.getByRole("link", { name: /← Connections in production/ }).click();
    expect(await page.locator(".meter").allInnerTexts()).toEqual([
      "Ready connections\n1 / 8",
      "Ready tools\n1 / 64",
    ]);
    const row = page.locator("table tbody tr").first();
    expect(await row.innerText()).toContain("Ready");
    expect(await row.innerText()).toContain("Nothing to do: tasks started in this environment receive");
    await screenshot(page, "connections");
  }, 90_000);

  test("a stale form is explained as a change since the page was loaded, with a reload", async ({
    web,
    deps,
    app,
  }) => {
    const owner = await newTenant(deps, app, "ui-conflict@example.com");
    await givePassword(deps, "ui-conflict@example.com");
    const first = await web.newPage();
    await signIn(first, "ui-conflict@example.com", TEST_PASSWORD);
    await first.getByRole("link", { name: "New connection" }).click();
    await first.getByLabel("Display name").fill("Docs");
    await first.getByLabel("Alias").fill("docs");
    await first.getByLabel("Endpoint URL").fill("https://mcp.example.com/mcp");
    await first.getByRole("button", { name: "Create connection" }).click();
    await first.waitForURL(/done=created/);
    const path = new URL(first.url()).pathname;
    // A second tab of the same person renames it.
    const second = await first.context().newPage();
    await second.goto(path);
    await second.getByLabel("Display name").fill("Docs (renamed elsewhere)");
    await second.getByRole("button", { name: "Save settings" }).click();
    await second.waitForURL(/done=updated/);

    await first.getByLabel("Display name").fill("Docs (mine)");
    await first.getByRole("button", { name: "Save settings" }).click();
    const warning = first.locator(".alert.warning[role=alert]");
    await warning.waitFor();
    expect(await warning.innerText()).toContain("This connection changed since you loaded this page");
    expect(await first.locator("h1").innerText()).toContain("Docs (renamed elsewhere)");
    await first.getByRole("link", { name: "Reload the page" }).click();
    await first.waitForURL((url) => url.pathname === path && url.search === "");
    expect(await first.locator(".alert.warning").count()).toBe(0);
    expect(owner.organizationId).toMatch(/^org_/);
  }, 60_000);

  test("endpoint changes need a disabled connection; deletion shows its effects and asks to confirm", async ({
    web,
    deps,
    app,
    mcp,
  }) => {
    const server = await mcp.start({ tools: [echoTool("lookup")] });
    const owner = await newTenant(deps, app, "ui-delete@example.com");
    await givePassword(deps, "ui-delete@example.com");
    const page = await web.newPage();
    await signIn(page, "ui-delete@example.com", TEST_PASSWORD);
    await page.getByRole("link", { name: "New connection" }).click();
    await page.getByLabel("Display name").fill("Inventory");
    await page.getByLabel("Alias").fill("inventory");
    await page.getByLabel("Endpoint URL").fill(server.url);
    await page.getByRole("button", { name: "Create connection" }).click();
    await page.getByRole("button", { name: "Discover tools" }).click();
    await page.waitForURL(/done=discovered/);
    await page.getByLabel("lookup").check();
    await page.getByRole("button", { name: "Approve selected tools" }).click();
    await page.waitForURL(/done=approved/);
    await page.getByRole("button", { name: "Enable", exact: true }).click();
    await page.waitForURL(/done=enabled/);
    expect(await page.locator("#delete + .card").innerText()).toContain(
      "Disable the connection before deleting it.",
    );

    await page.getByLabel("Endpoint URL").fill(`${server.origin}/elsewhere`);
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.locator(".alert.error").waitFor();
    expect(await page.locator(".alert.error").innerText()).toContain(
      "Disable the connection before changing its endpoint or authentication.",
    );
    expect(await page.getByLabel("Endpoint URL").inputValue()).toBe(`${server.origin}/elsewhere`);

    await page.getByRole("button", { name: "Disable…" }).click();
    await page.getByRole("heading", { name: "Disable Inventory?" }).waitFor();
    await page.getByRole("button", { name: "Disable connection" }).click();
    await page.waitForURL(/done=disabled/);
    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("heading", { name: "Delete Inventory?" }).waitFor();
    const effects = await page.locator("main ul").innerText();
    expect(effects).toContain("1 approved tool is removed with it.");
    expect(effects).toContain("It has no stored credential.");
    expect(effects).toContain("No running task uses it.");
    await screenshot(page, "delete-connection");
    await page.getByRole("button", { name: "Delete permanently" }).click();
    await page.waitForURL(/\/connections\?done=deleted$/);
    expect(await page.getByRole("status").innerText()).toContain("The connection was deleted.");
    expect(await page.locator("main").innerText()).toContain("No connections in this environment yet.");
    expect(owner.environmentId).toBeTruthy();
  }, 60_000);
});
