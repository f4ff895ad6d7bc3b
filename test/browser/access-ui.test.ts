import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import { memberships } from "../../src/platform/db/schema/users.ts";
import { webSessions } from "../../src/platform/db/schema/web-sessions.ts";
import { describe, expect, newTenant } from "../fixtures.ts";
import { haveChromium, screenshot, signIn, webTest as test } from "../lib/web-ui.ts";
import { givePassword, TEST_PASSWORD } from "../web.ts";

/**
 * Sign-in, sessions, CSRF, members, API keys and tenancy in a real browser against a real
 * patchbay: what a person (or a hostile page) can do with the forms.
 */

const title = haveChromium
  ? "access pages in Chromium"
  : "access pages in Chromium (skipped: no /usr/bin/chromium)";

/** A page on another origin (another port: same site, so SameSite=Lax cookies still travel). */
async function hostilePage(html: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe.skipIf(!haveChromium)(title, () => {
  test("sign-in errors, sign-out, going back after it, and an expired session", async ({
    web,
    deps,
    app,
  }) => {
    const owner = await newTenant(deps, app, "ui-session@example.com");
    await givePassword(deps, "ui-session@example.com");
    const page = await web.newPage();
    await page.goto("/login");
    await page.getByLabel("Email").fill("ui-session@example.com");
    await page.getByLabel("Password").fill("not the right password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator(".alert.error").waitFor();
    expect(await page.locator(".alert.error").innerText()).toBe("The email or password is not right.");
    expect(await page.getByLabel("Email").inputValue()).toBe("ui-session@example.com");
    await screenshot(page, "login");

    const members = `/orgs/${owner.organizationId}/members`;
    await page.goto(members);
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.getByLabel("Email").fill("ui-session@example.com");
    await page.getByLabel("Password").fill(TEST_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === members);
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === "patchbay_session")).toMatchObject({
      httpOnly: true,
      sameSite: "Lax",
    });

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/login\?reason=signed_out$/);
    expect(await page.getByRole("status").innerText()).toBe("You have signed out.");
    await page.goBack();
    await page.goto(members);
    expect(new URL(page.url()).pathname).toBe("/login");

    await signIn(page, "ui-session@example.com", TEST_PASSWORD);
    await page.goto(members);
    await deps.db
      .update(webSessions)
      .set({ lastSeenAt: new Date(Date.now() - 3 * 60 * 60 * 1000) })
      .where(eq(webSessions.userId, owner.userId));
    await page.reload();
    expect(new URL(page.url()).searchParams.get("reason")).toBe("expired");
    expect(await page.getByRole("status").innerText()).toBe(
      "Your session has ended. Sign in again to continue.",
    );
  }, 60_000);

  test("CSRF: another origin's auto-submitting form and a form without its token are refused", async ({
    web,
    deps,
    app,
  }) => {
    const owner = await newTenant(deps, app, "ui-csrf@example.com");
    await givePassword(deps, "ui-csrf@example.com");
    const page = await web.newPage();
    await signIn(page, "ui-csrf@example.com", TEST_PASSWORD);
    const members = `/orgs/${owner.organizationId}/members`;
    const evil =
      await hostilePage(`<!doctype html><form method="post" action="${web.baseUrl}${members}/invite">
      <input name="email" value="attacker@evil.example"><input name="role" value="owner"></form>
      <script>document.forms[0].submit()</script>`);
    try {
      const response = page.waitForResponse((r) => r.url().endsWith("/invite"));
      await page.goto(evil.url);
      expect((await response).status()).toBe(403);
      await page.getByText("csrf_rejected").waitFor();
      expect(await page.locator("main").innerText()).toContain("it came from another site");
    } finally {
      await evil.close();
    }
    await page.goto(members);
    expect(await page.locator("main").innerText()).not.toContain("attacker@evil.example");

    // Our own form, with its token removed: refused too.
    await page.evaluate(() =>
      document.querySelector('form[action$="/members/invite"] input[name=_csrf]')?.remove(),
    );
    await page.getByLabel("Email").fill("someone@example.com");
    await page.getByRole("button", { name: "Create invitation link" }).click();
    await page.getByText("csrf_rejected").waitFor();
    expect(await page.locator("main").innerText()).toContain("security token is missing or out of date");
    await page.goto(members);
    expect(await page.locator("main").innerText()).not.toContain("someone@example.com");
  }, 60_000);

  test("members: invite, accept in another browser, change the role, remove", async ({ web, deps, app }) => {
    const owner = await newTenant(deps, app, "ui-members@example.com");
    await givePassword(deps, "ui-members@example.com");
    const page = await web.newPage();
    await signIn(page, "ui-members@example.com", TEST_PASSWORD);
    await page.getByRole("link", { name: "Members" }).click();
    await page.getByLabel("Email").fill("ann@example.com");
    await page.getByLabel("Role", { exact: true }).selectOption("admin");
    await page.getByRole("button", { name: "Create invitation link" }).click();
    const link = await page.locator("#invitation-link").innerText();
    expect(link).toMatch(new RegExp(`^${web.baseUrl}/invitations/accept\\?token=pbi_`));
    await screenshot(page, "members");

    const ann = await web.newPage();
    await ann.goto(link);
    expect(await ann.locator("h1").innerText()).toBe("Join Demo organisation");
    await screenshot(ann, "invitation");
    await ann.getByLabel("Choose a password").fill("ann's own passphrase");
    await ann.getByLabel("Repeat the password").fill("ann's own passphrase");
    await ann.getByRole("button", { name: "Join Demo organisation" }).click();
    await ann.waitForURL(
      new RegExp(`/orgs/${owner.organizationId}/environments/${owner.environmentId}/connections$`),
    );
    expect(await ann.locator(".who").innerText()).toBe("ann@example.com · Admin");

    await page.goto(`/orgs/${owner.organizationId}/members`);
    const row = page.locator("tr", { hasText: "ann@example.com" });
    await row.getByLabel("Role of ann@example.com").selectOption("member");
    await row.getByRole("button", { name: "Set role" }).click();
    await page.waitForURL(/done=role_changed/);
    await ann.reload();
    expect(await ann.locator(".who").innerText()).toBe("ann@example.com · Member");
    expect(await ann.locator("main").innerText()).toContain("Only an owner or administrator");

    await page.locator("tr", { hasText: "ann@example.com" }).getByRole("link", { name: "Remove…" }).click();
    await page.getByRole("button", { name: "Remove ann@example.com" }).click();
    await page.waitForURL(/done=removed/);
    expect(await page.locator("table").first().innerText()).not.toContain("ann@example.com");
    const gone = await ann.reload();
    expect(gone?.status()).toBe(404);
  }, 60_000);

  test("API keys: the dialog offers no MCP permissions; the key is shown once; revoke", async ({
    web,
    deps,
    app,
  }) => {
    const owner = await newTenant(deps, app, "ui-keys@example.com");
    await givePassword(deps, "ui-keys@example.com");
    const page = await web.newPage();
    await signIn(page, "ui-keys@example.com", TEST_PASSWORD);
    await page.getByRole("link", { name: "API keys" }).click();
    const offered = await page
      .locator('input[name="permissions"]')
      .evaluateAll((els) => els.map((el) => (el as HTMLInputElement).value));
    expect(offered).toContain("environments:read");
    expect(offered.filter((p) => p.startsWith("mcp_connections:"))).toEqual([]);
    await page.getByLabel("Name", { exact: true }).fill("CI deploys");
    await page.getByLabel("tasks:read").check();
    await page.getByRole("button", { name: "Create key" }).click();
    const secret = await page.locator("#new-key").innerText();
    expect(secret).toMatch(/^sk_/);
    await screenshot(page, "api-keys");
    const me = await fetch(`${web.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
    expect(await me.json()).toMatchObject({
      user: { id: owner.userId },
      permissions: ["environments:read", "tasks:read"],
    });
    await page.goto(`/orgs/${owner.organizationId}/api-keys`);
    expect(await page.content()).not.toContain(secret);
    // Revoking asks first.
    await page
      .locator("tr", { hasText: "CI deploys" })
      .getByRole("link", { name: /^Revoke/ })
      .click();
    await page.getByRole("heading", { name: "Revoke CI deploys?" }).waitFor();
    await page.getByRole("button", { name: "Revoke key" }).click();
    await page.waitForURL(/done=revoked/);
    expect(await page.locator("tr", { hasText: "CI deploys" }).innerText()).toContain("Revoked");
    const after = await fetch(`${web.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
    expect(after.status).toBe(401);
  }, 60_000);

  test("switchers list only the user's organisations and environments; other tenants are 404", async ({
    web,
    deps,
    app,
    stranger,
  }) => {
    const first = await newTenant(deps, app, "ui-switch@example.com");
    const second = await newTenant(deps, app, "ui-switch@example.com"); // the same person owns both
    await givePassword(deps, "ui-switch@example.com");
    const staging = (await (await first.api.post("/environments", { name: "staging" })).json()) as {
      id: string;
    };
    const page = await web.newPage();
    await signIn(page, "ui-switch@example.com", TEST_PASSWORD);

    await page.locator("summary", { hasText: "Organisation" }).click();
    const orgLinks = await page
      .locator(".switcher")
      .first()
      .locator("a")
      .evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).pathname));
    expect(orgLinks.sort()).toEqual(
      [`/orgs/${first.organizationId}`, `/orgs/${second.organizationId}`].sort(),
    );
    await page.locator("summary", { hasText: "Environment" }).click();
    await page.getByRole("link", { name: "staging", exact: true }).click();
    await page.waitForURL(new RegExp(`/environments/${staging.id}/connections$`));
    expect(await page.locator("summary", { hasText: "Environment" }).innerText()).toContain("staging");

    const foreign = await page.goto(
      `/orgs/${first.organizationId}/environments/${stranger.environmentId}/connections`,
    );
    expect(foreign?.status()).toBe(404);
    expect(await page.locator("h1").innerText()).toBe("Not found");
    const foreignOrg = await page.goto(`/orgs/${stranger.organizationId}/members`);
    expect(foreignOrg?.status()).toBe(404);
    // A membership the person does not have stays invisible even after it existed.
    await deps.db.delete(memberships).where(eq(memberships.organizationId, second.organizationId));
    expect((await page.goto(`/orgs/${second.organizationId}`))?.status()).toBe(404);
  }, 60_000);
});
