import { Hono } from "hono";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { createKey, JSON_TYPE, jsonSpan, jsonTraces, post } from "../../../test/lib/telemetry.ts";
import type { AppEnv } from "../../transports/http/env.ts";
import { requestId } from "../../transports/http/request-id.ts";
import { createOtlpRouter } from "../../transports/otlp/otlp.ts";
import { createConversionPool } from "./conversion/conversion-pool.ts";
import type { TelemetryStore } from "./telemetry-store.ts";
import { createWriteQueue } from "./write-queue.ts";

describe("write queue", () => {
  test("admits up to maxRequests, then refuses until one is released", () => {
    const queue = createWriteQueue({ maxRequests: 2, maxBytes: 100, writers: 1 });
    const a = queue.admit();
    const b = queue.admit();
    expect(a && b).toBeTruthy();
    expect(queue.admit()).toBeUndefined();
    a?.release();
    a?.release(); // idempotent
    expect(queue.admitted).toBe(1);
    expect(queue.admit()).toBeDefined();
  });

  test("the byte budget is shared and given back on release", () => {
    const queue = createWriteQueue({ maxRequests: 10, maxBytes: 100, writers: 1 });
    const a = queue.admit();
    const b = queue.admit();
    expect(a?.reserve(60)).toBe(true);
    expect(b?.reserve(60)).toBe(false);
    a?.release();
    expect(queue.bytes).toBe(0);
    expect(b?.reserve(60)).toBe(true);
  });

  test("at most `writers` writes run at once; the rest wait their turn", async () => {
    const queue = createWriteQueue({ maxRequests: 10, maxBytes: 100, writers: 2 });
    let running = 0;
    let peak = 0;
    const write = async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, 10));
      running--;
    };
    await Promise.all(Array.from({ length: 6 }, () => queue.admit()?.run(write)));
    expect(peak).toBe(2);
  });
});

/** A store whose span writes wait for `open()`, or fail. */
function gatedStore(fail = false) {
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const store: TelemetryStore = {
    prepareSpans: () => ({ write: async () => {} }),
    prepareSpanRows: () => ({
      async write() {
        await gate;
        if (fail) throw new Error("connection refused");
      },
    }),
    prepareLogs: () => ({ write: async () => {} }),
    prepareMetricPoints: () => ({ write: async () => {} }),
    serviceHealth: async () => [],
    serviceSeries: async () => [],
    searchLogs: async () => [],
    traceSpans: async () => [],
    sweep: async () => ({
      spans: 0,
      entrySpans: 0,
      requestKeys: 0,
      logs: 0,
      metricPoints: 0,
      resources: 0,
      problems: 0,
      problemSpans: 0,
      deferredLogs: 0,
    }),
    groupDeferredLogs: async () => 0,
    close() {},
  };
  return { store, open: () => open() };
}

describe("OTLP ingest under load", () => {
  const appWith = (deps: AppEnv["Variables"]["deps"], store: TelemetryStore, maxRequests: number) => {
    const app = new Hono<AppEnv>();
    app.use("*", async (c, next) => {
      c.set("deps", deps);
      await next();
    });
    app.use("*", requestId());
    const queue = createWriteQueue({ maxRequests, maxBytes: 64 * 1024 * 1024, writers: 1 });
    const conversion = createConversionPool({ threads: 0, maxPending: maxRequests, logger: deps.logger });
    app.route("/v1", createOtlpRouter({ store, queue, conversion }));
    return { app, queue };
  };

  test("a full queue answers 503 with a short Retry-After instead of queueing more", async ({
    deps,
    owner,
  }) => {
    const { key } = await createKey(owner);
    const { store, open } = gatedStore();
    const { app, queue } = appWith(deps, store, 1);
    const body = JSON.stringify(jsonTraces([jsonSpan()]));
    const first = post(app, "/v1/traces", key, body, JSON_TYPE);
    await expect.poll(() => queue.admitted).toBe(1);
    const refused = await post(app, "/v1/traces", key, body, JSON_TYPE);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await refused.json()).toMatchObject({ code: 14, message: expect.stringMatching(/saturated/) });
    open();
    expect((await first).status).toBe(200);
    expect((await post(app, "/v1/traces", key, body, JSON_TYPE)).status).toBe(200);
  });

  test("a storage failure is a retryable 503, logged, never a 500", async ({ deps, owner, logs }) => {
    const { key } = await createKey(owner);
    const { store, open } = gatedStore(true);
    open();
    const { app } = appWith(deps, store, 4);
    const res = await post(app, "/v1/traces", key, JSON.stringify(jsonTraces([jsonSpan()])), JSON_TYPE);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(await res.json()).toMatchObject({ code: 14 });
    expect(logs.text()).toContain("telemetry write failed");
  });
});
