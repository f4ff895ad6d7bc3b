import { describe, expect, test } from "../../../test/fixtures.ts";
import { approveDevice, pollDevice, startDevice } from "../../../test/lib/oauth.ts";
import { signedInBrowser, webClient } from "../../../test/web.ts";

const SCOPE = "environments:read mcp_connections:read offline_access";

describe("device verification pages", () => {
  test("a signed-out person is sent to sign in first and brought back with the code", async ({
    app,
    deps,
  }) => {
    const started = await startDevice(app, deps, { scope: SCOPE });
    const browser = webClient(app, deps.config.baseUrl);
    const res = await browser.get(`/oauth/device?user_code=${started.user_code}`);
    expect(res.status).toBe(303);
    const login = new URL(res.headers.get("location") ?? "", deps.config.baseUrl);
    expect(login.pathname).toBe("/login");
    expect(login.searchParams.get("next")).toBe(`/oauth/device?user_code=${started.user_code}`);
  });

  test("until approved the CLI hears authorization_pending; a wrong code is said so", async ({
    app,
    deps,
    owner,
  }) => {
    const started = await startDevice(app, deps, { scope: SCOPE });
    const pending = await pollDevice(app, deps, started.device_code);
    expect(pending.status).toBe(400);
    expect(await pending.json()).toMatchObject({ error: "authorization_pending" });

    const browser = await signedInBrowser(app, deps, owner.userId);
    const page = await browser.page("/oauth/device");
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
    const wrong = await browser.post("/oauth/device", { xsrf, user_code: "BCDF-GHJK" });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("That code is not right, or it has expired.");
  });

  test("the code form is CSRF-protected like every other form", async ({ app, deps, owner }) => {
    const started = await startDevice(app, deps, { scope: SCOPE });
    const browser = await signedInBrowser(app, deps, owner.userId);
    const page = await browser.page("/oauth/device");
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
    const foreign = await browser.post(
      "/oauth/device",
      { xsrf, user_code: started.user_code },
      { origin: "https://evil.example" },
    );
    expect(foreign.status).toBe(403);
    const tokenless = await browser.post(
      "/oauth/device",
      { xsrf, user_code: started.user_code },
      { csrf: false },
    );
    expect(tokenless.status).toBe(403);
  });

  test("denying at consent tells the CLI access_denied", async ({ app, deps, owner }) => {
    const started = await startDevice(app, deps, { scope: SCOPE });
    const browser = await signedInBrowser(app, deps, owner.userId);
    const done = await approveDevice(deps, browser, started.user_code, {
      organizationId: owner.organizationId,
      decision: "deny",
    });
    expect(await done.text()).toContain("The request was cancelled.");
    const res = await pollDevice(app, deps, started.device_code);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "access_denied" });
  });

  test("a code is used once: a second approval of it is refused", async ({ app, deps, owner }) => {
    const started = await startDevice(app, deps, { scope: SCOPE });
    const browser = await signedInBrowser(app, deps, owner.userId);
    const done = await approveDevice(deps, browser, started.user_code, {
      organizationId: owner.organizationId,
    });
    expect(await done.text()).toContain("Device connected");
    const page = await browser.page("/oauth/device");
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
    const again = await browser.post("/oauth/device", { xsrf, user_code: started.user_code });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("That code is not right, or it has expired.");
  });
});
