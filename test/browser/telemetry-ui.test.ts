import { describe, expect, newTenant } from "../fixtures.ts";
import { readSnippet, runApplication } from "../lib/otel-app.ts";
import { haveChromium, screenshot, screenshotOf, signIn, webTest as test } from "../lib/web-ui.ts";
import { givePassword, TEST_PASSWORD } from "../web.ts";

/**
 * The telemetry pages in a real browser against a real patchbay: a person creates a telemetry
 * key, an application sends traces and logs with the OpenTelemetry SDK's own OTLP exporters using
 * the settings the page shows, and the person reads services, logs, the problem and its trace.
 */

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
    // Per service, requests, error rate and latency over the window, drawn from the same spans.
    const charts = page.locator("section.service-charts", { hasText: "checkout" });
    expect(await charts.locator('svg[role="img"]').count()).toBe(3);
    expect(await charts.locator("svg title").allTextContents()).toEqual([
      expect.stringMatching(/^Requests per /),
      "Error rate",
      "Latency p50 / p95 / p99",
    ]);
    expect(await charts.locator("svg desc").first().textContent()).toMatch(/^4 requests of checkout/);
    expect(await charts.locator("rect.s-errors").count()).toBe(1);
    expect(await charts.locator("rect.s-requests").count()).toBeGreaterThanOrEqual(1);
    expect(await charts.locator("polyline.s-p99, circle.s-p99").count()).toBeGreaterThanOrEqual(1);
    await charts.getByText("Figures as a table").click();
    expect(await charts.locator("details.chart-data table").innerText()).toMatch(/\b1 \(25 %\)/);
    await charts.getByText("Figures as a table").click();
    await screenshotOf(charts, "chart-service");

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
    const occurrences = page.locator("figure#occurrences");
    expect(await occurrences.locator('svg[role="img"] title').textContent()).toMatch(/^Occurrences per /);
    expect(await occurrences.locator("svg desc").textContent()).toMatch(
      /^1 occurrence recorded .* first seen .* last seen/,
    );
    expect(await occurrences.locator("rect.s-occurrences").count()).toBe(1);
    expect(await occurrences.locator("line.m-first").count()).toBe(1);
    expect(await occurrences.locator("line.m-last").count()).toBe(1);
    await screenshotOf(occurrences, "chart-problem-occurrences");

    await page.getByRole("link", { name: traceId }).click();
    await page.waitForURL((url) => url.pathname.endsWith(`/traces/${traceId}`));
    // The waterfall: a row per span, indented by depth, bars placed by start and sized by duration.
    const waterfall = page.locator("figure.waterfall svg[role=img]");
    expect(await waterfall.locator("title").textContent()).toBe(`Waterfall of trace ${traceId}`);
    expect(await waterfall.locator("desc").textContent()).toContain("4 spans over");
    expect(await waterfall.locator("text.w-name").allTextContents()).toEqual([
      "POST /checkout",
      "load cart",
      "reserve stock",
      "SELECT stock",
    ]);
    const bars = await waterfall
      .locator("rect.w-bar")
      .evaluateAll((all) =>
        all.map((r) => ({ x: Number(r.getAttribute("x")), width: Number(r.getAttribute("width")) })),
      );
    const names = await waterfall
      .locator("text.w-name")
      .evaluateAll((all) => all.map((t) => Number(t.getAttribute("x"))));
    expect(names[3]).toBeGreaterThan(names[2] ?? 0); // SELECT stock under reserve stock
    expect(names[2]).toBeGreaterThan(names[0] ?? 0);
    const [root, cart, reserve, query] = bars;
    expect(root?.x).toBeLessThan(cart?.x ?? 0); // load cart starts 4 ms in
    expect(reserve?.x).toBeLessThan(query?.x ?? 0);
    expect((query?.x ?? 0) + (query?.width ?? 0)).toBeLessThanOrEqual(
      (reserve?.x ?? 0) + (reserve?.width ?? 0) + 0.2,
    );
    expect(root?.width).toBeGreaterThan(reserve?.width ?? Number.POSITIVE_INFINITY);
    expect(await waterfall.locator("text.w-time").nth(2).textContent()).toMatch(/^26 ms · 56 ms$/);
    expect(await waterfall.locator("g.error text.w-name").allTextContents()).toEqual([
      "POST /checkout",
      "reserve stock",
    ]);
    await screenshotOf(page.locator("figure.waterfall"), "chart-trace-waterfall");
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
