import { test as base, describe, expect, newTenant } from "../fixtures.ts";
import { readSnippet, runApplication } from "../lib/otel-app.ts";
import { haveChromium, screenshot, signIn, startWebUi, type WebUi } from "../lib/web-ui.ts";
import { givePassword, TEST_PASSWORD } from "../web.ts";

/**
 * The telemetry pages in a real browser against a real patchbay: a person creates a telemetry
 * key, an application sends traces and logs with the OpenTelemetry SDK's own OTLP exporters using
 * the settings the page shows, and the person reads services, logs, the problem and its trace.
 */
const test = base.extend<{ web: WebUi }>({
  web: [
    async ({ deps }, use) => {
      const web = await startWebUi(deps);
      await use(web);
      await web.close();
    },
    { scope: "file" },
  ],
});

const title = haveChromium
  ? "telemetry pages in Chromium"
  : "telemetry pages in Chromium (skipped: no /usr/bin/chromium)";

describe.skipIf(!haveChromium)(title, () => {
  test("create a key, send OTLP with the SDK, then read services, logs, the problem and its trace", async ({
    web,
    deps,
    app,
  }) => {
    await newTenant(deps, app, "ui-telemetry@example.com");
    await givePassword(deps, "ui-telemetry@example.com");
    const page = await web.newPage();
    await signIn(page, "ui-telemetry@example.com", TEST_PASSWORD);

    await page.getByRole("link", { name: "Services", exact: true }).click();
    expect(await page.locator("main").innerText()).toContain("No telemetry in this environment yet.");
    await page.getByRole("link", { name: "telemetry keys", exact: true }).click();
    await page.getByLabel("Name").fill("checkout service");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = await page.locator("#new-key").innerText();
    expect(key).toMatch(/^pk_/);
    const { endpoint, authorization } = readSnippet(await page.locator("#new-key-snippet").innerText());
    expect(endpoint).toBe(web.baseUrl);
    expect(authorization).toBe(`Bearer ${key}`);
    await screenshot(page, "telemetry-keys");
    await page.goto(page.url()); // the key is in the POST's answer only
    expect(await page.locator("main").innerText()).not.toContain(key);

    const traceId = await runApplication(endpoint, authorization);

    await page.getByRole("link", { name: "Services", exact: true }).click();
    const checkout = page.locator("tr", { hasText: "checkout" });
    await checkout.waitFor();
    expect(await checkout.innerText()).toMatch(/4 requests/);
    expect(await checkout.innerText()).toMatch(/25 %/);
    await screenshot(page, "telemetry-services");

    await page.getByRole("link", { name: "Logs", exact: true }).click();
    await page.locator("tr", { hasText: "reserving stock failed" }).waitFor();
    await screenshot(page, "telemetry-logs");
    await page.getByLabel("Minimum severity").selectOption("warn");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/severity=warn/);
    expect(await page.locator("table.logs").innerText()).not.toContain("checkout started");
    await page.getByLabel("Trace id").fill("not a trace");
    await page.getByRole("button", { name: "Search" }).click();
    expect(await page.getByRole("alert").innerText()).toContain(
      "Trace id: must be 32 hexadecimal characters",
    );

    await page.getByRole("link", { name: "Problems", exact: true }).click();
    await page.getByRole("link", { name: /StockError: no stock left for sku/ }).click();
    expect(await page.locator("h1").innerText()).toMatch(/^StockError: no stock left for sku/);
    expect(await page.locator("table.frames").innerText()).toContain("reserveStock");
    await page.getByRole("button", { name: "Start a remediation" }).waitFor();
    await screenshot(page, "telemetry-problem");

    await page.getByRole("link", { name: traceId }).click();
    await page.waitForURL((url) => url.pathname.endsWith(`/traces/${traceId}`));
    const spans = page.locator("ol.spans > li");
    expect(await spans.count()).toBe(4);
    expect(await page.locator("summary.span-row").allInnerTexts()).toEqual([
      expect.stringContaining("POST /checkout"),
      expect.stringContaining("load cart"),
      expect.stringContaining("reserve stock"),
      expect.stringContaining("SELECT stock"),
    ]);
    await page.locator("summary.span-row", { hasText: "reserve stock" }).click();
    const exception = page.locator(".exception");
    expect(await exception.innerText()).toContain("StockError: no stock left for sku 41");
    expect(await exception.locator("pre").innerText()).toContain("at reserveStock");
    await screenshot(page, "telemetry-trace");

    // Back on the problem: resolve it.
    await page.goBack();
    await page.getByRole("button", { name: "Resolve" }).click();
    expect(await page.getByRole("status").innerText()).toContain("The problem is resolved.");
    await page.getByRole("button", { name: "Reopen" }).waitFor();
  }, 60_000);
});
