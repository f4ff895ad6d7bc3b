import { context, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import { SeverityNumber } from "@opentelemetry/api-logs";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { test as base, describe, expect, newTenant } from "../fixtures.ts";
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

class StockError extends Error {
  override name = "StockError";
}

/** A real exception with a real stack, as an instrumented application records it. */
function reserveStock(sku: number): never {
  throw new StockError(`no stock left for sku ${sku}`);
}

/** The settings a person copies from the keys page: endpoint and Authorization header. */
function readSnippet(snippet: string): { endpoint: string; authorization: string } {
  const endpoint = /OTEL_EXPORTER_OTLP_ENDPOINT=(\S+)/.exec(snippet)?.[1] ?? "";
  const authorization =
    /OTEL_EXPORTER_OTLP_HEADERS="authorization=(Bearer pk_[A-Za-z0-9]+)"/.exec(snippet)?.[1] ?? "";
  return { endpoint, authorization };
}

/**
 * A checkout application instrumented with the SDK: a server span with a cart lookup, a stock
 * reservation that throws (recorded as an exception event) with a database query under it, and
 * log records in the request's context. A second service answers a few requests.
 */
async function runApplication(endpoint: string, authorization: string): Promise<string> {
  const headers = { authorization };
  const tracerProvider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "checkout", "service.version": "1.4.2" }),
    spanProcessors: [
      new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces`, headers })),
    ],
  });
  const loggerProvider = new LoggerProvider({
    resource: resourceFromAttributes({ "service.name": "checkout" }),
    processors: [
      new SimpleLogRecordProcessor({
        exporter: new OTLPLogExporter({ url: `${endpoint}/v1/logs`, headers }),
      }),
    ],
  });
  const tracer = tracerProvider.getTracer("checkout", "1.4.2");
  const logger = loggerProvider.getLogger("checkout");
  const t0 = Date.now() - 5_000;
  const at = (ms: number) => new Date(t0 + ms);
  const inside = (span: Span) => trace.setSpan(context.active(), span);

  const root = tracer.startSpan("POST /checkout", {
    kind: 1,
    startTime: at(0),
    attributes: {
      "http.request.method": "POST",
      "http.route": "/checkout",
      "http.response.status_code": 500,
    },
  });
  logger.emit({
    severityNumber: SeverityNumber.INFO,
    severityText: "INFO",
    body: "checkout started for cart 7",
    context: inside(root),
    timestamp: at(1),
  });
  const cart = tracer.startSpan("load cart", { kind: 2, startTime: at(4) }, inside(root));
  cart.setAttribute("db.system", "postgresql");
  cart.end(at(22));
  const reserve = tracer.startSpan("reserve stock", { startTime: at(26) }, inside(root));
  const query = tracer.startSpan(
    "SELECT stock",
    { kind: 2, startTime: at(30), attributes: { "db.query.text": "select qty from stock where sku = $1" } },
    inside(reserve),
  );
  query.end(at(71));
  try {
    reserveStock(41);
  } catch (error) {
    reserve.recordException(error as Error, at(78));
    reserve.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
  }
  logger.emit({
    severityNumber: SeverityNumber.WARN,
    severityText: "WARN",
    body: "reserving stock failed; answering 500",
    attributes: { "cart.id": 7, sku: 41 },
    context: inside(reserve),
    timestamp: at(80),
  });
  reserve.end(at(82));
  root.setStatus({ code: SpanStatusCode.ERROR });
  root.end(at(96));

  for (let i = 0; i < 3; i++) {
    const span = tracer.startSpan("GET /health", { kind: 1, startTime: at(200 + i * 100) });
    span.end(at(203 + i * 100 + i));
  }
  // Another service of the application, healthy.
  const billingProvider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "billing" }),
    spanProcessors: [
      new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces`, headers })),
    ],
  });
  const billing = billingProvider.getTracer("billing");
  for (let i = 0; i < 6; i++) {
    billing.startSpan("POST /invoices", { kind: 1, startTime: at(300 + i * 50) }).end(at(318 + i * 53));
  }
  await billingProvider.shutdown();
  await tracerProvider.forceFlush();
  await loggerProvider.forceFlush();
  await tracerProvider.shutdown();
  await loggerProvider.shutdown();
  return root.spanContext().traceId;
}

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
