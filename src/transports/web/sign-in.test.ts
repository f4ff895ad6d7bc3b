import { eq } from "drizzle-orm";
import { describe, expect, newTenant, test } from "../../../test/fixtures.ts";
import { problem } from "../../../test/http.ts";
import { givePassword, TEST_PASSWORD, webClient } from "../../../test/web.ts";
import { createApp } from "../../app.ts";
import { SIGN_IN_PAIR_FREE_ATTEMPTS } from "../../features/web-sessions/session-policy.ts";
import { startWebSession } from "../../features/web-sessions/start-web-session.ts";
import { sweepWebSessions } from "../../features/web-sessions/sweep-web-sessions.ts";
import { users } from "../../platform/db/schema/users.ts";
import { signInLimits, webSessions } from "../../platform/db/schema/web-sessions.ts";

const sessionCookie = "patchbay_session";

describe("sign-in", () => {
  test("the sign-in page is a labelled form with a CSRF token and strict headers", async ({ app }) => {
    const browser = webClient(app);
    const res = await browser.get("/login");
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toMatch(/<label for="f-email">Email<\/label>/);
    expect(page).toMatch(/<input id="f-password" name="password" type="password"/);
    expect(browser.token).toMatch(/^[0-9a-z]{40,64}$/);
    expect(browser.cookies.get("patchbay_csrf")).toBe(browser.token);
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("referrer-policy")).toBe("same-origin");
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  test("the right password opens an HttpOnly, SameSite=Lax session and lands in the organisation", async ({
    app,
    deps,
  }) => {
    const alice = await newTenant(deps, app, "alice@example.com");
    await givePassword(deps, "Alice@Example.com");
    const browser = webClient(app);
    const res = await browser.signIn("  ALICE@example.com ", TEST_PASSWORD);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/");
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith(`${sessionCookie}=`)) ?? "";
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
    expect(cookie).toMatch(/Max-Age=43200/);
    const home = await browser.get("/");
    expect(home.headers.get("location")).toBe(`/orgs/${alice.organizationId}`);
    const org = await browser.get(`/orgs/${alice.organizationId}`);
    expect(org.headers.get("location")).toBe(
      `/orgs/${alice.organizationId}/environments/${alice.environmentId}/connections`,
    );
    // Only a hash of the cookie's secret is stored.
    const secret = browser.cookies.get(sessionCookie) ?? "";
    const rows = await deps.db.select().from(webSessions).where(eq(webSessions.userId, alice.userId));
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(secret);
  });

  test("a wrong password and an unknown email get the same answer", async ({ app, deps }) => {
    await newTenant(deps, app, "bob@example.com");
    await givePassword(deps, "bob@example.com");
    const wrong = webClient(app);
    const a = await wrong.signIn("bob@example.com", "not the password at all");
    const unknown = webClient(app);
    const b = await unknown.signIn("nobody@example.com", "not the password at all");
    const noPassword = webClient(app);
    await newTenant(deps, app, "carol@example.com");
    const c = await noPassword.signIn("carol@example.com", "not the password at all");
    const strip = (html: string) => html.replace(/value="[^"]*"/g, "");
    const bodies = await Promise.all([a, b, c].map(async (r) => strip(await r.text())));
    expect([a.status, b.status, c.status]).toEqual([401, 401, 401]);
    expect(bodies[0]).toContain("The email or password is not right.");
    expect(bodies[1]).toBe(bodies[0]?.replace("bob@example.com", "nobody@example.com"));
    expect(bodies[2]).toBe(bodies[0]?.replace("bob@example.com", "carol@example.com"));
    expect(wrong.cookies.has(sessionCookie)).toBe(false);
  });

  test("repeated failures hold the email back from that client for a while, even with the right password", async ({
    app,
    deps,
  }) => {
    await newTenant(deps, app, "dave@example.com");
    await givePassword(deps, "dave@example.com");
    const browser = webClient(app);
    for (let i = 0; i < SIGN_IN_PAIR_FREE_ATTEMPTS; i++) {
      expect((await browser.signIn("dave@example.com", `wrong guess ${i}xxxx`)).status).toBe(401);
    }
    const locked = await browser.signIn("dave@example.com", TEST_PASSWORD);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await locked.text()).toContain("Too many failed sign-in attempts");
    // An unknown email is throttled the same way: the lock reveals nothing.
    for (let i = 0; i < SIGN_IN_PAIR_FREE_ATTEMPTS; i++)
      await browser.signIn("ghost@example.com", "wrong guess here");
    expect((await browser.signIn("ghost@example.com", "wrong guess here")).status).toBe(429);
    // Once the wait has passed, the right password works again.
    await deps.db.update(signInLimits).set({ notBefore: new Date(Date.now() - 1000) });
    expect((await browser.signIn("dave@example.com", TEST_PASSWORD)).status).toBe(303);
  });

  test("signing in again rotates the session: the old cookie stops working", async ({ app, deps }) => {
    const erin = await newTenant(deps, app, "erin@example.com");
    await givePassword(deps, "erin@example.com");
    const browser = webClient(app);
    await browser.signIn("erin@example.com", TEST_PASSWORD);
    const first = browser.cookies.get(sessionCookie) ?? "";
    // Signing in from a browser that holds a session (its form carries that session's token).
    await browser.page(`/orgs/${erin.organizationId}/members`);
    const again = await browser.post("/login", { email: "erin@example.com", password: TEST_PASSWORD });
    expect(again.status).toBe(303);
    const second = browser.cookies.get(sessionCookie) ?? "";
    expect(second).not.toBe(first);
    const stale = webClient(app);
    stale.cookies.set(sessionCookie, first);
    const res = await stale.get(`/orgs/${erin.organizationId}/members`);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(
      `/login?next=%2Forgs%2F${erin.organizationId}%2Fmembers&reason=expired`,
    );
  });

  test("the next parameter only ever leads to a path on this site", async ({ app, deps }) => {
    await newTenant(deps, app, "frank@example.com");
    await givePassword(deps, "frank@example.com");
    for (const next of ["//evil.example/x", "https://evil.example", "/\\evil.example", "/orgs/x"]) {
      const browser = webClient(app);
      await browser.page(`/login?next=${encodeURIComponent(next)}`);
      const res = await browser.post("/login", { email: "frank@example.com", password: TEST_PASSWORD, next });
      expect(res.headers.get("location"), next).toBe(next === "/orgs/x" ? "/orgs/x" : "/");
    }
  });

  test("over https the session cookie is __Host- and Secure", async ({ deps }) => {
    const httpsApp = createApp({ ...deps, config: { ...deps.config, baseUrl: "https://patchbay.example" } });
    await newTenant(deps, httpsApp, "gina@example.com");
    await givePassword(deps, "gina@example.com");
    const browser = webClient(httpsApp, "https://patchbay.example");
    const res = await browser.signIn("gina@example.com", TEST_PASSWORD);
    expect(res.status).toBe(303);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("__Host-patchbay_session=")) ?? "";
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).not.toMatch(/Domain=/);
  });

  test("a stored hash is argon2id", async ({ app, deps }) => {
    const h = await newTenant(deps, app, "hugo@example.com");
    await givePassword(deps, "hugo@example.com");
    const [row] = await deps.db.select().from(users).where(eq(users.id, h.userId));
    expect(row?.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });
});

describe("sessions", () => {
  test("signing out revokes the session server-side", async ({ app, deps }) => {
    const ivy = await newTenant(deps, app, "ivy@example.com");
    await givePassword(deps, "ivy@example.com");
    const browser = webClient(app);
    await browser.signIn("ivy@example.com", TEST_PASSWORD);
    const secret = browser.cookies.get(sessionCookie) ?? "";
    await browser.page(`/orgs/${ivy.organizationId}/members`);
    const out = await browser.post("/logout");
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/login?reason=signed_out");
    expect(browser.cookies.has(sessionCookie)).toBe(false);
    const replay = webClient(app);
    replay.cookies.set(sessionCookie, secret);
    expect((await replay.get(`/orgs/${ivy.organizationId}/members`)).status).toBe(303);
  });

  test("idle and absolute expiry end a session", async ({ app, deps }) => {
    const jo = await newTenant(deps, app, "jo@example.com");
    await givePassword(deps, "jo@example.com");
    const page = `/orgs/${jo.organizationId}/members`;
    const idle = webClient(app);
    await idle.signIn("jo@example.com", TEST_PASSWORD);
    await idle.page(page);
    const threeHoursAgo = new Date(Date.now() - 3 * 60 * 60 * 1000);
    await deps.db
      .update(webSessions)
      .set({ lastSeenAt: threeHoursAgo })
      .where(eq(webSessions.userId, jo.userId));
    const res = await idle.get(page);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toContain("reason=expired");
    expect(idle.cookies.has(sessionCookie)).toBe(false);

    const old = webClient(app);
    await old.signIn("jo@example.com", TEST_PASSWORD);
    await old.page(page);
    await deps.db
      .update(webSessions)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(webSessions.userId, jo.userId));
    expect((await old.get(page)).status).toBe(303);
  });

  test("the hourly sweep deletes ended sessions and stale throttle windows, not live ones", async ({
    app,
    deps,
  }) => {
    const pat = await newTenant(deps, app, "pat@example.com");
    await givePassword(deps, "pat@example.com");
    const now = new Date();
    const ago = (hours: number) => new Date(now.getTime() - hours * 60 * 60 * 1000);
    const live = await startWebSession(deps.db, { userId: pat.userId, now });
    const revoked = await startWebSession(deps.db, { userId: pat.userId, now: ago(30) });
    await startWebSession(deps.db, { userId: pat.userId, now: ago(40) }); // past its absolute expiry
    const idle = await startWebSession(deps.db, { userId: pat.userId, now: ago(11) });
    await deps.db
      .update(webSessions)
      .set({ revokedAt: ago(25) })
      .where(eq(webSessions.id, revoked.id));
    await deps.db
      .update(webSessions)
      .set({ lastSeenAt: ago(27) })
      .where(eq(webSessions.id, idle.id));
    await deps.db.insert(signInLimits).values([
      { key: "addr:old", attempts: 3, expiresAt: ago(0.1) },
      { key: "addr:live", attempts: 3, expiresAt: ago(-0.1) },
    ]);
    await sweepWebSessions(deps.db, now);
    const left = await deps.db
      .select({ id: webSessions.id })
      .from(webSessions)
      .where(eq(webSessions.userId, pat.userId));
    // The revoked (a day ago), past-expiry and two-day-idle ones are gone.
    expect(left.map((r) => r.id)).toEqual([live.id]);
    const limits = await deps.db.select({ key: signInLimits.key }).from(signInLimits);
    expect(limits.map((r) => r.key)).not.toContain("addr:old");
    expect(limits.map((r) => r.key)).toContain("addr:live");
  });

  test("/api/v1 refuses a real session cookie", async ({ app, deps }) => {
    await newTenant(deps, app, "kim@example.com");
    await givePassword(deps, "kim@example.com");
    const browser = webClient(app);
    await browser.signIn("kim@example.com", TEST_PASSWORD);
    const res = await app.request("/api/v1/me", {
      headers: { cookie: `${sessionCookie}=${browser.cookies.get(sessionCookie)}` },
    });
    expect(res.status).toBe(401);
    expect((await problem(res)).code).toBe("unauthorized");
  });

  test("another organisation's pages are 404, as on the API", async ({ app, deps, stranger }) => {
    await newTenant(deps, app, "lee@example.com");
    await givePassword(deps, "lee@example.com");
    const browser = webClient(app);
    await browser.signIn("lee@example.com", TEST_PASSWORD);
    for (const path of [
      `/orgs/${stranger.organizationId}`,
      `/orgs/${stranger.organizationId}/members`,
      "/orgs/org_doesnotexist/members",
    ]) {
      const res = await browser.get(path);
      expect(res.status, path).toBe(404);
      expect(await res.text()).toContain("Not found");
    }
  });
});

describe("CSRF", () => {
  test("a form POST without the token, from another origin, or not as a form is refused", async ({
    app,
    deps,
  }) => {
    const mo = await newTenant(deps, app, "mo@example.com");
    await givePassword(deps, "mo@example.com");
    const browser = webClient(app);
    await browser.signIn("mo@example.com", TEST_PASSWORD);
    await browser.page(`/orgs/${mo.organizationId}/members`);
    const invite = `/orgs/${mo.organizationId}/members/invite`;
    const fields = { email: "x@example.com", role: "member" };
    const attempts = [
      await browser.post(invite, fields, { csrf: false }),
      await browser.post(invite, fields, { csrf: "forged-token-value" }),
      await browser.post(invite, fields, { origin: "https://evil.example" }),
      await browser.post(invite, fields, { origin: "null" }),
      await browser.post(invite, fields, { origin: null }),
      await browser.post(invite, {}, { raw: { type: "application/json", body: JSON.stringify(fields) } }),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(403);
      expect(await res.text()).toContain("csrf_rejected");
    }
    expect((await browser.post("/logout", {}, { csrf: false })).status).toBe(403);
    // Still signed in, and nothing was invited.
    const page = await browser.page(`/orgs/${mo.organizationId}/members`);
    expect(page).not.toContain("x@example.com");
    expect((await browser.post(invite, fields)).status).toBe(201);
  });

  test("the sign-in form itself needs the pre-session token (no login CSRF)", async ({ app, deps }) => {
    await newTenant(deps, app, "ned@example.com");
    await givePassword(deps, "ned@example.com");
    const attacker = webClient(app);
    const res = await attacker.post(
      "/login",
      { email: "ned@example.com", password: TEST_PASSWORD },
      { csrf: false },
    );
    expect(res.status).toBe(403);
    expect(attacker.cookies.has(sessionCookie)).toBe(false);
  });
});
