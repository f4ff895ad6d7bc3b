import { and, eq } from "drizzle-orm";
import { describe, expect, newTenant, test } from "../../../test/fixtures.ts";
import { client } from "../../../test/http.ts";
import { givePassword, TEST_PASSWORD, type WebClient, webClient } from "../../../test/web.ts";
import type { Deps } from "../../deps.ts";
import { generateApiKeySecret } from "../../features/api-keys/key-secret.ts";
import { newId } from "../../ids.ts";
import { permissions } from "../../permissions.ts";
import { apiKeys } from "../../platform/db/schema/api-keys.ts";
import { invitations } from "../../platform/db/schema/invitations.ts";
import { memberships } from "../../platform/db/schema/users.ts";

const NEW_PASSWORD = "a brand new passphrase";

async function signedInOwner(app: Parameters<typeof webClient>[0], deps: Deps, email: string) {
  const tenant = await newTenant(deps, app as never, email);
  await givePassword(deps, email);
  const browser = webClient(app);
  await browser.signIn(email, TEST_PASSWORD);
  return { tenant, browser, members: `/orgs/${tenant.organizationId}/members` };
}

/** Invites through the members page and returns the one-time link's path. */
async function invite(
  browser: WebClient,
  membersPath: string,
  email: string,
  role = "member",
): Promise<string> {
  await browser.page(membersPath);
  const res = await browser.post(`${membersPath}/invite`, { email, role });
  const page = await res.text();
  expect(res.status, page).toBe(201);
  const link = /<code class="secret" id="invitation-link">([^<]+)<\/code>/.exec(page)?.[1] ?? "";
  expect(link).toMatch(/^http:\/\/127\.0\.0\.1:8787\/invitations\/accept\?token=pbi_/);
  return new URL(link.replaceAll("&amp;", "&")).pathname + new URL(link.replaceAll("&amp;", "&")).search;
}

/** Opens the link (as a browser would, picking up its form token) and joins with a new password. */
async function accept(app: Parameters<typeof webClient>[0], link: string): Promise<WebClient> {
  const invitee = webClient(app);
  await invitee.page(link);
  const token = new URLSearchParams(link.split("?")[1]).get("token") ?? "";
  const res = await invitee.post("/invitations/accept", {
    token,
    password: NEW_PASSWORD,
    confirm: NEW_PASSWORD,
  });
  expect(res.status).toBe(303);
  return invitee;
}

describe("invitations", () => {
  test("an invitee sets a password, joins with the role and is signed in; the link works once", async ({
    app,
    deps,
  }) => {
    const { tenant, browser, members } = await signedInOwner(app, deps, "owner1@example.com");
    const link = await invite(browser, members, "New.Person@Example.com", "admin");
    const list = await browser.page(members);
    expect(list).toContain("new.person@example.com");
    expect(list).not.toContain("pbi_"); // the link is shown once, never listed

    const invitee = webClient(app);
    const form = await invitee.page(link);
    expect(form).toContain(`Join Demo organisation`);
    expect(form).toContain("as an administrator");
    const mismatch = await invitee.post("/invitations/accept", {
      token: new URLSearchParams(link.split("?")[1]).get("token") ?? "",
      password: NEW_PASSWORD,
      confirm: "something else entirely",
    });
    expect(mismatch.status).toBe(400);
    expect(await mismatch.text()).toContain("The two passwords differ.");
    const token = new URLSearchParams(link.split("?")[1]).get("token") ?? "";
    const short = await invitee.post("/invitations/accept", { token, password: "short", confirm: "short" });
    expect(short.status).toBe(400);
    expect(await short.text()).toMatch(/at least 12 characters/);

    const joined = await invitee.post("/invitations/accept", {
      token,
      password: NEW_PASSWORD,
      confirm: NEW_PASSWORD,
    });
    expect(joined.status).toBe(303);
    expect(joined.headers.get("location")).toBe(`/orgs/${tenant.organizationId}`);
    const page = await invitee.page(members);
    expect(page).toContain("new.person@example.com");
    expect(page).toContain("Only an owner can invite people");

    const again = webClient(app);
    expect((await again.get(link)).status).toBe(410);
    // The new password signs in from another browser too.
    expect((await webClient(app).signIn("new.person@example.com", NEW_PASSWORD)).status).toBe(303);
  });

  test("expired, withdrawn and made-up links are all 410 with one message", async ({ app, deps }) => {
    const { browser, members } = await signedInOwner(app, deps, "owner2@example.com");
    const expired = await invite(browser, members, "late@example.com");
    await deps.db
      .update(invitations)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(invitations.email, "late@example.com"));
    const withdrawn = await invite(browser, members, "gone@example.com");
    const page = await browser.page(members);
    const id = /\/invitations\/(inv_[0-9a-z]+)\/revoke/.exec(page)?.[1] ?? "";
    expect((await browser.post(`${members.replace("/members", "")}/invitations/${id}/revoke`)).status).toBe(
      303,
    );
    for (const link of [expired, withdrawn, "/invitations/accept?token=pbi_madeup", "/invitations/accept"]) {
      const res = await webClient(app).get(link);
      expect(res.status, link).toBe(410);
      expect(await res.text()).toContain("This invitation link is not valid");
    }
  });

  test("a newer invitation replaces the open one for the same address", async ({ app, deps }) => {
    const { browser, members } = await signedInOwner(app, deps, "owner3@example.com");
    const first = await invite(browser, members, "twice@example.com");
    const second = await invite(browser, members, "twice@example.com");
    expect((await webClient(app).get(first)).status).toBe(410);
    expect((await webClient(app).get(second)).status).toBe(200);
  });

  test("someone who already has an account confirms their password instead", async ({ app, deps }) => {
    const { tenant, browser, members } = await signedInOwner(app, deps, "owner4@example.com");
    await newTenant(deps, app, "existing@example.com");
    await givePassword(deps, "existing@example.com");
    const link = await invite(browser, members, "existing@example.com");
    const token = new URLSearchParams(link.split("?")[1]).get("token") ?? "";
    const invitee = webClient(app);
    expect(await invitee.page(link)).toContain("This address already has an account");
    const wrong = await invitee.post("/invitations/accept", { token, password: "not my password!!" });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("That is not the password of this account");
    const ok = await invitee.post("/invitations/accept", { token, password: TEST_PASSWORD });
    expect(ok.headers.get("location")).toBe(`/orgs/${tenant.organizationId}`);
  });

  test("inviting an existing member is refused next to the email field", async ({ app, deps }) => {
    const { browser, members } = await signedInOwner(app, deps, "owner5@example.com");
    await browser.page(members);
    const res = await browser.post(`${members}/invite`, { email: "owner5@example.com", role: "member" });
    expect(res.status).toBe(409);
    const page = await res.text();
    expect(page).toContain('id="f-email-error"');
    expect(page).toContain("is already a member");
  });
});

describe("roles", () => {
  test("a demotion applies to the member's API keys at once (auth cache notified)", async ({ app, deps }) => {
    const { tenant, browser, members } = await signedInOwner(app, deps, "owner6@example.com");
    const link = await invite(browser, members, "admin6@example.com", "admin");
    await accept(app, link);
    const [admin] = await deps.db
      .select()
      .from(memberships)
      .where(and(eq(memberships.organizationId, tenant.organizationId), eq(memberships.role, "admin")));
    const key = generateApiKeySecret();
    await deps.db.insert(apiKeys).values({
      id: newId("key"),
      organizationId: tenant.organizationId,
      userId: admin?.userId ?? "",
      name: "admin key",
      prefix: key.prefix,
      secretHash: key.hash,
      permissions: [...permissions],
    });
    const adminApi = client(app, key.secret);
    const path = `/environments/${tenant.environmentId}/mcp-connections`;
    expect((await adminApi.get(path)).status).toBe(200); // cached with role admin now

    await browser.page(members);
    const res = await browser.post(`${members}/${admin?.userId}/role`, { role: "member" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${members}?done=role_changed`);
    expect((await adminApi.get(path)).status).toBe(403);
    const audit = await browser.page(`${members}?done=role_changed`);
    expect(audit).toContain("The role was changed.");
  });

  test("the last owner cannot be demoted or removed", async ({ app, deps }) => {
    const { tenant, browser, members } = await signedInOwner(app, deps, "owner7@example.com");
    await browser.page(members);
    const demote = await browser.post(`${members}/${tenant.userId}/role`, { role: "admin" });
    expect(demote.status).toBe(409);
    expect(await demote.text()).toContain("only owner");
    const remove = await browser.post(`${members}/${tenant.userId}/remove`);
    expect(remove.status).toBe(409);
  });

  test("removing a member revokes their keys and their access to the organisation", async ({ app, deps }) => {
    const { tenant, browser, members } = await signedInOwner(app, deps, "owner8@example.com");
    const link = await invite(browser, members, "leaver@example.com", "admin");
    const leaver = await accept(app, link);
    const page = await browser.page(members);
    const userId =
      /\/members\/(usr_[0-9a-z]+)\/remove/.exec(page.replace(`/members/${tenant.userId}/remove`, ""))?.[1] ??
      "";
    await deps.db.insert(apiKeys).values({
      id: newId("key"),
      organizationId: tenant.organizationId,
      userId,
      name: "leaver key",
      prefix: "sk_x",
      secretHash: generateApiKeySecret().hash,
      permissions: ["environments:read"],
    });
    const confirm = await browser.page(`${members}/${userId}/remove`);
    expect(confirm).toContain("Remove leaver@example.com?");
    const res = await browser.post(`${members}/${userId}/remove`);
    expect(res.headers.get("location")).toBe(`${members}?done=removed`);
    const keys = await deps.db.select().from(apiKeys).where(eq(apiKeys.userId, userId));
    expect(keys.every((k) => k.revokedAt !== null)).toBe(true);
    expect((await leaver.get(members)).status).toBe(404);
  });

  test("admins and members cannot invite or change roles", async ({ app, deps }) => {
    const { tenant, browser, members } = await signedInOwner(app, deps, "owner9@example.com");
    const link = await invite(browser, members, "admin9@example.com", "admin");
    const admin = await accept(app, link);
    await admin.page(members);
    const res = await admin.post(`${members}/invite`, { email: "x9@example.com", role: "owner" });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("Only an owner of this organisation may manage its members.");
    const promote = await admin.post(`${members}/${tenant.userId}/role`, { role: "member" });
    expect(promote.status).toBe(403);
  });
});
