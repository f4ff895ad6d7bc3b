import { eq } from "drizzle-orm";
import { describe, expect, test } from "../../../test/fixtures.ts";
import {
  createKey,
  decodeResponse,
  encodeRequest,
  hexId,
  JSON_TYPE,
  PROTO_TYPE,
  post,
  resource,
  storedSpans,
} from "../../../test/lib/telemetry.ts";
import { telemetryMetricPoints } from "../../platform/db/schema/telemetry.ts";

const nanos = (msAgo: number) => (BigInt(Date.now() - msAgo) * 1_000_000n).toString();

describe("OTLP/JSON encoding rules", () => {
  test("hex ids, int64 as strings or numbers, enums as integers, all value kinds", async ({
    app,
    owner,
    deps,
  }) => {
    const { key } = await createKey(owner);
    const traceId = hexId(16).toUpperCase();
    const start = BigInt(Date.now() - 1000) * 1_000_000n + 123_456n;
    // A JSON number this large is not exact (spacing 256 ns): accepted as it parses.
    const end = Number(start + 2_000_000n);
    const span = {
      traceId,
      spanId: "00f067aa0ba902b7",
      parentSpanId: "",
      name: "lookup",
      kind: 3,
      startTimeUnixNano: start.toString(),
      endTimeUnixNano: end,
      unknownFutureField: { ignored: true },
      attributes: [
        { key: "s", value: { stringValue: "text" } },
        { key: "b", value: { boolValue: true } },
        { key: "i", value: { intValue: "9007199254740993" } },
        { key: "n", value: { intValue: 42 } },
        { key: "d", value: { doubleValue: 1.5 } },
        { key: "bytes", value: { bytesValue: "aGk=" } },
        { key: "a", value: { arrayValue: { values: [{ stringValue: "x" }, { intValue: "1" }] } } },
        { key: "kv", value: { kvlistValue: { values: [{ key: "inner", value: { boolValue: false } }] } } },
        { key: "empty", value: {} },
        { key: "__proto__", value: { stringValue: "data, not a prototype" } },
      ],
      links: [{ traceId: hexId(16), spanId: hexId(8) }],
      status: { code: 2, message: "not found" },
    };
    const body = {
      resourceSpans: [
        { resource: resource("search"), scopeSpans: [{ scope: { name: "s" }, spans: [span] }] },
      ],
    };
    const res = await post(app, "/v1/traces", key, JSON.stringify(body), {
      "content-type": "application/json; charset=utf-8",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual({});
    const [row] = await storedSpans(deps.db, owner.environmentId);
    expect(row).toMatchObject({
      traceId: traceId.toLowerCase(),
      spanId: "00f067aa0ba902b7",
      parentSpanId: null,
      kind: 3,
      statusCode: 2,
      statusMessage: "not found",
      serviceName: "search",
      durationNs: Number(BigInt(end) - start),
    });
    expect((row?.startMicros ?? 0) % 1000).toBe(123);
    expect(row?.attributes).toMatchObject({
      s: "text",
      b: true,
      i: "9007199254740993",
      n: 42,
      d: 1.5,
      bytes: "aGk=",
      a: ["x", 1],
      kv: { inner: false },
      empty: null,
    });
    // jsonb keeps `__proto__` as an ordinary key; it never became the object's prototype.
    const attributes = row?.attributes ?? {};
    expect(Object.getOwnPropertyDescriptor(attributes, "__proto__")?.value).toBe("data, not a prototype");
    expect(Object.getPrototypeOf(row?.attributes)).toBe(Object.prototype);
    expect(row?.links).toEqual([
      { traceId: span.links[0]?.traceId, spanId: span.links[0]?.spanId, attributes: {} },
    ]);
  });

  test("a resource without service.name is unknown_service", async ({ app, owner, deps }) => {
    const { key } = await createKey(owner);
    const span = {
      traceId: hexId(16),
      spanId: hexId(8),
      startTimeUnixNano: nanos(10),
      endTimeUnixNano: nanos(5),
    };
    const res = await post(
      app,
      "/v1/traces",
      key,
      JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }),
      JSON_TYPE,
    );
    expect(res.status).toBe(200);
    const [row] = await storedSpans(deps.db, owner.environmentId);
    expect(row?.serviceName).toBe("unknown_service");
  });
});

describe("OTLP metrics", () => {
  const metrics = (points: { time: string }) => ({
    resourceMetrics: [
      {
        resource: resource("api"),
        scopeMetrics: [
          {
            metrics: [
              {
                name: "queue.depth",
                unit: "1",
                gauge: { dataPoints: [{ timeUnixNano: points.time, asInt: "12" }] },
              },
              {
                name: "http.requests",
                sum: {
                  aggregationTemporality: 2,
                  isMonotonic: true,
                  dataPoints: [
                    {
                      timeUnixNano: points.time,
                      startTimeUnixNano: nanos(60_000),
                      asDouble: 5,
                      attributes: [{ key: "route", value: { stringValue: "/a" } }],
                    },
                    { asDouble: 1 },
                  ],
                },
              },
              {
                name: "http.duration",
                unit: "ms",
                histogram: {
                  aggregationTemporality: 1,
                  dataPoints: [
                    {
                      timeUnixNano: points.time,
                      count: "3",
                      sum: 30,
                      bucketCounts: ["1", "2", "0"],
                      explicitBounds: [10, 100],
                    },
                  ],
                },
              },
              {
                name: "gc.pause",
                summary: {
                  dataPoints: [
                    {
                      timeUnixNano: points.time,
                      count: 2,
                      sum: 4,
                      quantileValues: [{ quantile: 0.5, value: 2 }],
                    },
                  ],
                },
              },
              { name: "", gauge: { dataPoints: [{ timeUnixNano: points.time, asDouble: 1 }] } },
            ],
          },
        ],
      },
    ],
  });

  test.for(["json", "protobuf"] as const)(
    "data points are stored one per row (%s)",
    async (format, { app, owner, deps }) => {
      const { key } = await createKey(owner);
      const body = metrics({ time: nanos(1000) });
      const res =
        format === "json"
          ? await post(app, "/v1/metrics", key, JSON.stringify(body), JSON_TYPE)
          : await post(app, "/v1/metrics", key, encodeRequest("metrics", body), PROTO_TYPE);
      expect(res.status).toBe(200);
      const answer =
        format === "json" ? await res.json() : decodeResponse("metrics", await res.arrayBuffer());
      expect(answer).toMatchObject({ partialSuccess: { rejectedDataPoints: format === "json" ? "2" : 2 } });
      const rows = await deps.db
        .select()
        .from(telemetryMetricPoints)
        .where(eq(telemetryMetricPoints.environmentId, owner.environmentId));
      const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
      expect(rows).toHaveLength(4);
      expect(byName["queue.depth"]).toMatchObject({
        type: "gauge",
        value: 12,
        unit: "1",
        serviceName: "api",
        data: null,
      });
      expect(byName["http.requests"]).toMatchObject({
        type: "sum",
        value: 5,
        data: { temporality: 2, monotonic: true },
        attributes: { route: "/a" },
      });
      expect(byName["http.requests"]?.startTime).not.toBeNull();
      expect(byName["http.duration"]).toMatchObject({
        type: "histogram",
        value: null,
        data: { count: 3, sum: 30, min: null, bounds: [10, 100], counts: [1, 2, 0], temporality: 1 },
      });
      expect(byName["gc.pause"]).toMatchObject({
        type: "summary",
        data: { count: 2, sum: 4, quantiles: [{ quantile: 0.5, value: 2 }] },
      });
    },
  );
});
