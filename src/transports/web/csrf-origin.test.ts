import { describe, expect, test } from "../../../test/fixtures.ts";
import { webClient } from "../../../test/web.ts";

// Pages send Referrer-Policy: no-referrer, so a real browser's same-origin form post carries
// `Origin: null` (Fetch standard); Sec-Fetch-Site then decides.
describe("CSRF origin check with Origin: null", () => {
  test("a same-origin post (Sec-Fetch-Site: same-origin) is accepted", async ({ app }) => {
    const browser = webClient(app);
    await browser.page("/login");
    const res = await app.request("/login", {
      method: "POST",
      headers: {
        origin: "null",
        "sec-fetch-site": "same-origin",
        "content-type": "application/x-www-form-urlencoded",
        cookie: `patchbay_csrf=${browser.token}`,
      },
      body: new URLSearchParams({
        _csrf: browser.token ?? "",
        email: "nobody@example.com",
        password: "x",
      }).toString(),
    });
    // Past the CSRF check: the sign-in itself answers (wrong password).
    expect(res.status).toBe(401);
  });

  test("a cross-site post with Origin: null is refused", async ({ app }) => {
    const browser = webClient(app);
    await browser.page("/login");
    for (const site of ["cross-site", "same-site", undefined]) {
      const res = await app.request("/login", {
        method: "POST",
        headers: {
          origin: "null",
          ...(site ? { "sec-fetch-site": site } : {}),
          "content-type": "application/x-www-form-urlencoded",
          cookie: `patchbay_csrf=${browser.token}`,
        },
        body: new URLSearchParams({
          _csrf: browser.token ?? "",
          email: "a@example.com",
          password: "x",
        }).toString(),
      });
      expect(res.status, String(site)).toBe(403);
      expect(await res.text()).toContain("csrf_rejected");
    }
  });
});
