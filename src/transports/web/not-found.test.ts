import { describe, expect, newTenant, test } from "../../../test/fixtures.ts";
import { givePassword, TEST_PASSWORD, webClient } from "../../../test/web.ts";

const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

describe("an unknown path", () => {
  test("a browser gets the 404 page in the layout; API clients keep problem+json", async ({ app }) => {
    const page = await app.request("http://localhost/no-such-page?x=1", {
      headers: { accept: browserAccept },
    });
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(page.headers.get("cache-control")).toBe("no-store");
    const text = await page.text();
    expect(text).toContain('<header class="top">');
    expect(text).toContain("<h1>Not found</h1>");
    expect(text).toContain("<code>not_found</code>");

    for (const accept of ["application/json", "application/problem+json", "*/*", ""]) {
      const res = await app.request("http://localhost/no-such-page", { headers: accept ? { accept } : {} });
      expect(res.status, accept).toBe(404);
      expect(res.headers.get("content-type"), accept).toMatch(/^application\/problem\+json/);
      expect(((await res.json()) as { code: string }).code).toBe("not_found");
    }
    // The machine doors answer problem+json to a browser too, and a form POST to nowhere is no page.
    for (const [method, path] of [
      ["GET", "/api/v1/no-such-route"],
      ["GET", "/v1/no-such-signal"],
      ["GET", "/x402/no-such-thing"],
      ["POST", "/no-such-page"],
    ] as const) {
      const res = await app.request(`http://localhost${path}`, {
        method,
        headers: { accept: browserAccept },
      });
      expect(res.headers.get("content-type"), path).toMatch(/^application\/(problem\+)?json/);
      expect(res.status, path).toBeGreaterThanOrEqual(400);
    }
  });

  test("a signed-in person's 404 page has their header and navigation", async ({ app, deps }) => {
    await newTenant(deps, app, "not-found@example.com");
    await givePassword(deps, "not-found@example.com");
    const browser = webClient(app);
    await browser.signIn("not-found@example.com", TEST_PASSWORD);
    const res = await app.request("http://localhost/settings/typo", {
      headers: {
        accept: browserAccept,
        cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; "),
      },
    });
    expect(res.status).toBe(404);
    const text = await res.text();
    expect(text).toContain("not-found@example.com");
    expect(text).toContain("Sign out");
  });
});
