import { describe, expect, newTenant, type Tenant, test } from "../../../../test/fixtures.ts";
import { client, problem } from "../../../../test/http.ts";
import {
  createKey,
  hexId,
  JSON_TYPE,
  jsonAttributes,
  jsonLog,
  jsonLogs,
  jsonSpan,
  jsonTraces,
  keyWith,
  nanosAgo,
  post,
  sendJson,
} from "../../../../test/lib/telemetry.ts";
import type { MemberActor } from "../../../actor.ts";
import type { ServiceContext } from "../../../context.ts";
import type { Deps } from "../../../deps.ts";
import { isAppError } from "../../../errors.ts";
import { getServiceSeries } from "./get-service-series.ts";
import { hasTelemetry } from "./has-telemetry.ts";
import type { LogPage, ServiceHealthPage, Trace } from "./schemas.ts";

const MS = 1_000_000n;

/** A span of `durationMs` that started `agoMs` ago. */
const timed = (agoMs: number, durationMs: number, overrides: Record<string, unknown> = {}) => {
  const start = BigInt(nanosAgo(agoMs));
  return jsonSpan({
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + BigInt(durationMs) * MS).toString(),
    ...overrides,
  });
};

describe("service health", () => {
  test("entry-span rates and percentiles per service over the window, last seen, pages by name", async ({
    app,
    owner,
  }) => {
    const { key } = await createKey(owner);
    const remoteParent = hexId(8);
    const server = Array.from({ length: 10 }, (_, i) =>
      timed(60_000 + i * 1000, (i + 1) * 10, {
        kind: 2,
        parentSpanId: remoteParent,
        status: { code: i < 2 ? 2 : 0 },
      }),
    );
    const first = server[0] as { traceId: string; spanId: string };
    // Internal children are not requests; a server span 2 hours ago is outside the 1 h window.
    const children = Array.from({ length: 5 }, () =>
      timed(60_000, 1, { kind: 1, traceId: first.traceId, parentSpanId: first.spanId }),
    );
    const old = timed(2 * 3600_000, 500, { kind: 2 });
    await sendJson(app, "traces", key, jsonTraces([...server, ...children, old], "checkout"));
    // A root span of any kind is a request.
    await sendJson(app, "traces", key, jsonTraces([timed(30_000, 5, { kind: 1 })], "billing"));
    await sendJson(app, "logs", key, jsonLogs([jsonLog({ body: { stringValue: "sent" } })], "mailer"));

    const res = await owner.api.get(`/environments/${owner.environmentId}/services?window=1h`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as ServiceHealthPage;
    expect(body.window).toBe("1h");
    expect(Date.parse(body.to) - Date.parse(body.from)).toBe(3600_000);
    expect(body.items.map((s) => s.service)).toEqual(["billing", "checkout", "mailer"]);
    const [billing, checkout, mailer] = body.items;
    expect(checkout).toMatchObject({
      requestCount: 10,
      errorCount: 2,
      errorRate: 0.2,
      requestRate: 0.003,
      latencyMs: { p50: 55, p95: 95.5, p99: 99.1 },
    });
    expect(Date.now() - Date.parse(checkout?.lastSeen ?? "")).toBeLessThan(65_000);
    expect(billing).toMatchObject({ requestCount: 1, errorCount: 0, errorRate: 0, latencyMs: { p50: 5 } });
    expect(mailer).toMatchObject({ requestCount: 0, errorCount: 0, errorRate: null, latencyMs: null });

    const wide = (await (
      await owner.api.get(`/environments/${owner.environmentId}/services?window=6h`)
    ).json()) as ServiceHealthPage;
    expect(wide.items.find((s) => s.service === "checkout")?.requestCount).toBe(11);

    const page1 = (await (
      await owner.api.get(`/environments/${owner.environmentId}/services?pageSize=2`)
    ).json()) as ServiceHealthPage;
    expect(page1.items.map((s) => s.service)).toEqual(["billing", "checkout"]);
    const page2 = (await (
      await owner.api.get(
        `/environments/${owner.environmentId}/services?pageSize=2&cursor=${page1.nextCursor ?? ""}`,
      )
    ).json()) as ServiceHealthPage;
    expect(page2).toMatchObject({ items: [{ service: "mailer" }], nextCursor: null });

    const bad = await owner.api.get(`/environments/${owner.environmentId}/services?window=2y`);
    expect(bad.status).toBe(400);
    expect(await problem(bad)).toMatchObject({ code: "invalid_request" });
  });
});

/** A telemetry reader of `tenant`'s organisation, as the web UI's session actor would be. */
const readerOf = (deps: Deps, tenant: Tenant): ServiceContext<MemberActor> => ({
  deps,
  requestId: "test",
  channel: "web",
  actor: {
    type: "web_session",
    id: "wss_test",
    organizationId: tenant.organizationId,
    userId: tenant.userId,
    role: "member",
    permissions: new Set(["telemetry:read", "environments:read"]),
  },
});

describe("service series", () => {
  test("requests, errors and percentiles per bucket of the window, for the named services of the caller's environment only", async ({
    app,
    deps,
    owner,
  }) => {
    const { key } = await createKey(owner);
    // 55 and 5 minutes ago sit mid-bucket (buckets of 2 minutes from the window's start).
    const early = [10, 20, 30].map((ms, i) =>
      timed(55 * 60_000 + i * 1000, ms, { kind: 2, status: { code: i === 0 ? 2 : 0 } }),
    );
    const late = [100, 300].map((ms, i) => timed(5 * 60_000 + i * 1000, ms, { kind: 2 }));
    const root = early[1] as { traceId: string; spanId: string };
    const child = timed(55 * 60_000, 1, { kind: 1, traceId: root.traceId, parentSpanId: root.spanId });
    await sendJson(app, "traces", key, jsonTraces([...early, ...late, child], "checkout"));
    // Another organisation's checkout, busier: never in the owner's series.
    const other = await newTenant(deps, app);
    const { key: otherKey } = await createKey(other);
    await sendJson(
      app,
      "traces",
      otherKey,
      jsonTraces(
        Array.from({ length: 7 }, () => timed(50 * 60_000, 5, { kind: 2 })),
        "checkout",
      ),
    );

    const series = await getServiceSeries({
      ctx: readerOf(deps, owner),
      input: { environmentId: owner.environmentId, window: "1h", services: ["checkout", "nothing-here"] },
    });
    expect(series.bucketSeconds).toBe(120);
    expect(Date.parse(series.to) - Date.parse(series.from)).toBe(3600_000);
    const [checkout, nothing] = series.services;
    expect(nothing).toEqual({ service: "nothing-here", points: [] });
    expect(checkout?.points).toHaveLength(2);
    const [first, second] = checkout?.points ?? [];
    expect(first).toMatchObject({ requests: 3, errors: 1, latencyMs: { p50: 20 } });
    expect(first?.errorRate).toBeCloseTo(1 / 3);
    expect(second).toMatchObject({ requests: 2, errors: 0, errorRate: 0, latencyMs: { p50: 200, p99: 298 } });
    // Buckets are aligned to the window's start and in order.
    for (const p of checkout?.points ?? []) {
      expect((Date.parse(p.start) - Date.parse(series.from)) % 120_000).toBe(0);
    }
    expect(Date.parse(first?.start ?? "")).toBeLessThan(Date.parse(second?.start ?? ""));

    // Another organisation's reader cannot read this environment (404, as everywhere).
    const refused = await getServiceSeries({
      ctx: readerOf(deps, other),
      input: { environmentId: owner.environmentId, window: "1h", services: ["checkout"] },
    }).catch((error: unknown) => error);
    expect(isAppError(refused) && refused.code).toBe("not_found");
  });
});

describe("logs", () => {
  test("time range, service, minimum severity, text and trace id filters; newest first; keyset pages", async ({
    app,
    owner,
  }) => {
    const { key } = await createKey(owner);
    const traceId = hexId(16);
    const at = (minutes: number) => nanosAgo(minutes * 60_000);
    await sendJson(
      app,
      "logs",
      key,
      jsonLogs(
        [
          jsonLog({ timeUnixNano: at(50), body: { stringValue: "user 42 logged in" } }),
          jsonLog({
            timeUnixNano: at(40),
            severityNumber: 13,
            severityText: "WARN",
            body: { stringValue: "disk 91% full" },
          }),
          jsonLog({
            timeUnixNano: at(30),
            severityNumber: 17,
            severityText: "ERROR",
            body: { stringValue: "payment failed: Timeout" },
            traceId,
            spanId: hexId(8),
            attributes: jsonAttributes({ "order.id": 7 }),
          }),
          jsonLog({
            timeUnixNano: at(20),
            severityNumber: 5,
            severityText: "DEBUG",
            body: { stringValue: "cache miss" },
          }),
          jsonLog({ timeUnixNano: at(180), severityNumber: 17, body: { stringValue: "old failure" } }),
        ],
        "api",
      ),
    );
    await sendJson(
      app,
      "logs",
      key,
      jsonLogs([jsonLog({ timeUnixNano: at(10), body: { stringValue: "GET /" } })], "web"),
    );
    const path = `/environments/${owner.environmentId}/logs`;
    const bodies = async (query: string) => {
      const res = await owner.api.get(`${path}${query}`);
      expect(res.status).toBe(200);
      return ((await res.json()) as LogPage).items.map((l) => l.body);
    };

    expect(await bodies("")).toEqual([
      "GET /",
      "cache miss",
      "payment failed: Timeout",
      "disk 91% full",
      "user 42 logged in",
    ]);
    expect(await bodies("?severity=warn")).toEqual(["payment failed: Timeout", "disk 91% full"]);
    expect(await bodies("?q=TIMEOUT")).toEqual(["payment failed: Timeout"]);
    // `%` and `_` are text, not wildcards.
    expect(await bodies(`?q=${encodeURIComponent("%")}`)).toEqual(["disk 91% full"]);
    expect(await bodies(`?traceId=${traceId.toUpperCase()}`)).toEqual(["payment failed: Timeout"]);
    expect(await bodies("?service=web")).toEqual(["GET /"]);
    const from = new Date(Date.now() - 4 * 3600_000).toISOString();
    const to = new Date(Date.now() - 35 * 60_000).toISOString();
    expect(await bodies(`?from=${from}&to=${to}`)).toEqual([
      "disk 91% full",
      "user 42 logged in",
      "old failure",
    ]);

    const [error] = ((await (await owner.api.get(`${path}?severity=error`)).json()) as LogPage).items;
    expect(error).toMatchObject({
      severity: "error",
      severityNumber: 17,
      severityText: "ERROR",
      service: "api",
      traceId,
      attributes: { "order.id": 7 },
      scope: "test",
    });
    expect(error?.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = (await (
        await owner.api.get(`${path}?pageSize=2${cursor ? `&cursor=${cursor}` : ""}`)
      ).json()) as LogPage;
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((l) => l.body ?? ""));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([
      "GET /",
      "cache miss",
      "payment failed: Timeout",
      "disk 91% full",
      "user 42 logged in",
    ]);
  });

  test("bad parameters are 400 invalid_request, never a 500", async ({ owner }) => {
    const path = `/environments/${owner.environmentId}/logs`;
    const now = new Date().toISOString();
    for (const query of [
      `?from=${now}&to=${now}`,
      "?cursor=bm90LWEtY3Vyc29y",
      "?cursor=%%%",
      "?traceId=xyz",
      "?severity=loud",
      "?pageSize=0",
      "?from=yesterday",
      `?q=${"x".repeat(201)}`,
    ]) {
      const res = await owner.api.get(`${path}${query}`);
      expect(res.status, query).toBe(400);
      expect((await problem(res)).code).toBe("invalid_request");
    }
  });
});

describe("traces", () => {
  test("the span tree depth first, with resources, kinds, statuses and exception events", async ({
    app,
    owner,
  }) => {
    const { key } = await createKey(owner);
    const traceId = hexId(16);
    const [a, b, c, d, e] = Array.from({ length: 5 }, () => hexId(8));
    const span = (spanId: string | undefined, parent: string | undefined, agoMs: number, extra = {}) =>
      timed(agoMs, 2, {
        traceId,
        spanId,
        ...(parent ? { parentSpanId: parent } : {}),
        name: `op ${spanId}`,
        ...extra,
      });
    await sendJson(
      app,
      "traces",
      key,
      jsonTraces(
        [
          span(d, a, 800, { kind: 3 }),
          span(c, b, 900, {
            kind: 1,
            status: { code: 2, message: "boom" },
            events: [
              {
                name: "exception",
                timeUnixNano: nanosAgo(899),
                attributes: jsonAttributes({ "exception.type": "Error", "exception.message": "boom" }),
              },
            ],
          }),
          span(a, undefined, 1000, { kind: 2 }),
          span(b, a, 950, { kind: 3 }),
          // Its parent never arrived: shown as a root.
          span(e, hexId(8), 700, { kind: 1 }),
        ],
        "checkout",
      ),
    );
    const res = await owner.api.get(`/environments/${owner.environmentId}/traces/${traceId}`);
    expect(res.status).toBe(200);
    const trace = (await res.json()) as Trace;
    expect(trace).toMatchObject({ traceId, spanCount: 5, truncated: false, services: ["checkout"] });
    expect(trace.spans.map((s) => [s.spanId, s.depth])).toEqual([
      [a, 0],
      [b, 1],
      [c, 2],
      [d, 1],
      [e, 0],
    ]);
    expect(trace.spans[0]).toMatchObject({
      kind: "server",
      parentSpanId: null,
      durationMs: 2,
      status: { code: "unset", message: null },
      resourceAttributes: { "service.name": "checkout" },
    });
    expect(trace.spans[2]).toMatchObject({
      kind: "internal",
      status: { code: "error", message: "boom" },
      events: [{ name: "exception", attributes: { "exception.type": "Error" } }],
    });
    expect(trace.spans[2]?.events[0]?.time).toMatch(/Z$/);
    expect(trace.durationMs).toBeGreaterThanOrEqual(300);

    const missing = await owner.api.get(`/environments/${owner.environmentId}/traces/${hexId(16)}`);
    expect(missing.status).toBe(404);
    expect((await problem(missing)).code).toBe("not_found");
    const invalid = await owner.api.get(`/environments/${owner.environmentId}/traces/not-a-trace`);
    expect(invalid.status).toBe(400);
  });
});

describe("COPY text", () => {
  test("tabs, newlines, backslashes, quotes, \\N and non-ASCII text come back as sent", async ({
    app,
    owner,
  }) => {
    const { key } = await createKey(owner);
    const tricky = 'tab\there\nnew line\r\\N \\ back\\slash "quoted" \\. ünïcødé 🚀 \u2028';
    const traceId = hexId(16);
    await sendJson(
      app,
      "traces",
      key,
      jsonTraces(
        [
          jsonSpan({
            traceId,
            name: tricky,
            status: { code: 2, message: tricky },
            attributes: jsonAttributes({ [tricky]: tricky, "path\\key": "C:\\temp\\x" }),
          }),
        ],
        `svc ${tricky}`,
      ),
    );
    await sendJson(
      app,
      "logs",
      key,
      jsonLogs([jsonLog({ traceId, body: { stringValue: tricky } })], "logs\tsvc"),
    );
    const trace = (await (
      await owner.api.get(`/environments/${owner.environmentId}/traces/${traceId}`)
    ).json()) as Trace;
    expect(trace.spans[0]).toMatchObject({
      name: tricky,
      service: `svc ${tricky}`,
      status: { message: tricky },
      attributes: { [tricky]: tricky, "path\\key": "C:\\temp\\x" },
    });
    const logs = (await (
      await owner.api.get(`/environments/${owner.environmentId}/logs?traceId=${traceId}`)
    ).json()) as LogPage;
    expect(logs.items).toMatchObject([{ body: tricky, service: "logs\tsvc" }]);
  });
});

describe("hasTelemetry", () => {
  test("false until a batch of any signal is stored for the environment, and only for it", async ({
    app,
    deps,
    owner,
    stranger,
  }) => {
    expect(await hasTelemetry(deps.db, owner.environmentId)).toBe(false);
    const { key } = await createKey(owner);
    // A refused request stores nothing, so it does not count.
    await post(app, "/v1/logs", key, "{not json", JSON_TYPE);
    expect(await hasTelemetry(deps.db, owner.environmentId)).toBe(false);
    await sendJson(app, "logs", key, jsonLogs([jsonLog()], "first"));
    expect(await hasTelemetry(deps.db, owner.environmentId)).toBe(true);
    expect(await hasTelemetry(deps.db, stranger.environmentId)).toBe(false);
  });
});

describe("access", () => {
  test("telemetry reads need telemetry:read and the caller's own environment (404 across tenants)", async ({
    app,
    owner,
    stranger,
  }) => {
    const { key } = await createKey(owner);
    const traceId = hexId(16);
    await sendJson(app, "traces", key, jsonTraces([jsonSpan({ traceId })]));
    const mine = `/environments/${owner.environmentId}`;
    for (const path of [`${mine}/services`, `${mine}/logs`, `${mine}/traces/${traceId}`]) {
      expect((await owner.api.get(path)).status, path).toBe(200);
      const across = await stranger.api.get(path);
      expect(across.status, path).toBe(404);
      expect((await problem(across)).code).toBe("not_found");
      expect((await app.request(`/api/v1${path}`)).status).toBe(401);
    }
    // Their own environment does not hold my trace either.
    expect((await stranger.api.get(`/environments/${stranger.environmentId}/traces/${traceId}`)).status).toBe(
      404,
    );

    const limited = client(app, await keyWith(owner, ["environments:read"]));
    const denied = await limited.get(`${mine}/logs`);
    expect(denied.status).toBe(403);
    expect(await problem(denied)).toMatchObject({ code: "forbidden", requiredPermission: "telemetry:read" });
  });
});
