import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { DEFERRED_LOG_WAIT_MS } from "../src/features/telemetry/problems/record-problems.ts";
import type { Problem, ProblemPage } from "../src/features/telemetry/problems/schemas.ts";
import type { LogPage, ServiceHealthPage, Trace } from "../src/features/telemetry/queries/schemas.ts";
import { describe, expect, test } from "./fixtures.ts";
import { listen } from "./http.ts";
import { createKey } from "./lib/telemetry.ts";

const demoDir = fileURLToPath(new URL("../examples/demo-app/", import.meta.url));

/** Starts examples/demo-app against `endpoint` with the standard OTEL_* variables only. */
async function startDemo(endpoint: string, key: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ["--import", "./telemetry.ts", "server.ts"], {
    cwd: demoDir,
    env: {
      ...process.env,
      PORT: "0",
      OTEL_SERVICE_NAME: "demo-shop",
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${key}`,
      OTEL_METRICS_EXPORTER: "none",
      OTEL_BSP_SCHEDULE_DELAY: "200",
      OTEL_BLRP_SCHEDULE_DELAY: "200",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stderr?.on("data", (chunk) => {
    output += String(chunk);
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`demo app did not start:\n${output}`)), 20_000);
    child.stdout?.on("data", (chunk) => {
      output += String(chunk);
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once("exit", (code) => reject(new Error(`demo app exited (${code}):\n${output}`)));
  });
  return { url, child };
}

describe("the instrumented demo app against patchbay", () => {
  test("its errors become one problem per bug, counted per occurrence, with traces and logs to read", async ({
    app,
    owner,
    deps,
  }) => {
    const server = await listen(app);
    const { key } = await createKey(owner, "demo app");
    const demo = await startDemo(server.url, key);
    const ORDER_FAILURES = 5;
    const QUANTITY_FAILURES = 3;
    try {
      const get = async (path: string) => {
        const res = await fetch(`${demo.url}${path}`);
        await res.arrayBuffer();
        return res.status;
      };
      // The same bug with a different order id in each message: one problem.
      for (let i = 0; i < ORDER_FAILURES; i++) expect(await get(`/orders/ord_${100 + i * 37}`)).toBe(500);
      for (const qty of ["two", "-1", "1.5"]) expect(await get(`/checkout?qty=${qty}`)).toBe(500);
      expect(await get("/orders/ord_1")).toBe(200);
      expect(await get("/checkout?qty=2")).toBe(200);
    } finally {
      // SIGTERM makes the SDK flush its batches before the process exits.
      const exited = once(demo.child, "exit");
      demo.child.kill("SIGTERM");
      await exited;
    }
    const env = `/environments/${owner.environmentId}`;
    try {
      // Each failure's ERROR log is evidence on its span's problem, once its wait is over.
      await deps.telemetry.store.groupDeferredLogs(new Date(Date.now() + DEFERRED_LOG_WAIT_MS + 1_000));
      const page = (await (await owner.api.get(`${env}/problems?service=demo-shop`)).json()) as ProblemPage;
      expect(page.items).toHaveLength(2);
      const orders = page.items.find((p) => p.exceptionType === "OrderNotFoundError");
      const quantities = page.items.find((p) => p.exceptionType === "TypeError");
      expect(orders).toMatchObject({
        count: ORDER_FAILURES,
        status: "open",
        title: "OrderNotFoundError: order <id> was not found",
        culprit: "findOrder (demo-app/orders.ts)",
      });
      expect(quantities).toMatchObject({
        count: QUANTITY_FAILURES,
        culprit: "parseQuantity (demo-app/orders.ts)",
      });

      for (const summary of [orders, quantities]) {
        const problem = (await (await owner.api.get(`${env}/problems/${summary?.id}`)).json()) as Problem;
        expect(problem.sampleTraceIds.length).toBe(summary?.count);
        expect(problem).toMatchObject({
          logCount: summary?.count,
          sampleLogMessage: expect.stringContaining("failed"),
        });
        expect(problem.stackTrace).toContain("orders.ts");
        for (const traceId of problem.sampleTraceIds) {
          const res = await owner.api.get(`${env}/traces/${traceId}`);
          expect(res.status).toBe(200);
          const trace = (await res.json()) as Trace;
          const failed = trace.spans.find((s) => s.events.some((e) => e.name === "exception"));
          expect(failed).toMatchObject({ service: "demo-shop", kind: "server", status: { code: "error" } });
          // The request's log record carries the same trace.
          const logs = (await (await owner.api.get(`${env}/logs?traceId=${traceId}`)).json()) as LogPage;
          expect(logs.items).toMatchObject([{ severity: "error", service: "demo-shop" }]);
        }
      }

      const logs = (await (
        await owner.api.get(`${env}/logs?service=demo-shop&pageSize=200`)
      ).json()) as LogPage;
      expect(logs.items).toHaveLength(ORDER_FAILURES + QUANTITY_FAILURES + 2);
      const health = (await (await owner.api.get(`${env}/services`)).json()) as ServiceHealthPage;
      expect(health.items.find((s) => s.service === "demo-shop")).toMatchObject({
        requestCount: ORDER_FAILURES + QUANTITY_FAILURES + 2,
        errorCount: ORDER_FAILURES + QUANTITY_FAILURES,
      });
    } finally {
      await server.close();
    }
  });
});
