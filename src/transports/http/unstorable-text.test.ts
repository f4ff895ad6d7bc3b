import { describe, expect, newTenant, test } from "../../../test/fixtures.ts";
import { problem } from "../../../test/http.ts";
import { givePassword, TEST_PASSWORD, webClient } from "../../../test/web.ts";

describe("NUL characters", () => {
  test("in the path or the query: 400 invalid_request, before any lookup", async ({ owner }) => {
    for (const path of [
      `/environments/${owner.environmentId}%00`,
      `/environments/${owner.environmentId}/logs?q=a%00b`,
    ]) {
      const res = await owner.api.get(path);
      expect(res.status).toBe(400);
      expect((await problem(res)).code).toBe("invalid_request");
    }
    // `%2500` is the text "%00", which is no NUL.
    expect((await owner.api.get(`/environments/${owner.environmentId}/logs?q=a%2500b`)).status).toBe(200);
  });

  test("in a JSON string: 400 invalid_request and nothing written; an escaped backslash is text", async ({
    owner,
  }) => {
    const refused = await owner.api.post("/environments", { name: "staging\u0000" });
    expect(refused.status).toBe(400);
    expect((await problem(refused)).detail).toBe("JSON strings must not contain NUL characters.");
    const names = async () =>
      ((await (await owner.api.get("/environments")).json()) as { items: { name: string }[] }).items.map(
        (e) => e.name,
      );
    expect(await names()).toEqual(["production"]);

    // The body is still read by the route after the guard looked at it.
    const created = await owner.api.post("/environments", { name: "back\\u0000slash" });
    expect(created.status).toBe(201);
    expect(await names()).toContain("back\\u0000slash");
  });

  test("paid x402 routes refuse it too, before asking for payment", async ({ app }) => {
    const res = await app.request("/x402/signup", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ organizationName: "a\u0000b" }),
    });
    expect(res.status).toBe(400);
    expect((await problem(res)).code).toBe("invalid_request");
  });
});

describe("NUL characters in the web UI", () => {
  test("in a page's path or a form field: a 400 page, nothing written", async ({ app, deps }) => {
    const email = "nul-web@example.com";
    const tenant = await newTenant(deps, app, email);
    await givePassword(deps, email);
    const browser = webClient(app);
    expect((await browser.signIn(email, TEST_PASSWORD)).status).toBe(303);
    const page = await browser.get(`/orgs/${tenant.organizationId}%00/api-keys`);
    expect(page.status).toBe(400);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect(await page.text()).toContain("The path and query must not contain NUL characters");

    const keys = `/orgs/${tenant.organizationId}/api-keys`;
    await browser.page(keys);
    // A name no random token on the page (CSRF, ids) can contain by chance; "ci" once did.
    const posted = await browser.post(keys, { name: "nul-probe\u0000key", permissions: "environments:read" });
    expect(posted.status).toBe(400);
    expect(await posted.text()).toContain("Form fields must not contain NUL characters");
    expect(await browser.page(keys)).not.toContain("nul-probe");
  });
});
