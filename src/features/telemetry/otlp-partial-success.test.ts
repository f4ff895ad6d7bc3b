import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { describe, expect, test } from "../../../test/fixtures.ts";
import {
  createKey,
  decodeResponse,
  JSON_TYPE,
  jsonSpan,
  jsonTraces,
  PROTO_TYPE,
  post,
  protoSpan,
  protoTraces,
  resource,
  spansOf,
  storedSpans,
} from "../../../test/lib/telemetry.ts";
import { telemetryLogs } from "../../platform/db/schema/telemetry.ts";

describe("OTLP ingest bounds what it stores and reports partial success", () => {
  test("huge attribute values are stored truncated; attribute counts are capped", async ({
    app,
    owner,
    deps,
  }) => {
    const { key } = await createKey(owner);
    const many = Array.from({ length: 1000 }, (_, i) => ({ key: `k${i}`, value: { intValue: i } }));
    const span = jsonSpan({
      attributes: [{ key: "huge", value: { stringValue: "x".repeat(1024 * 1024) } }, ...many],
      events: [
        {
          name: "exception",
          timeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
          attributes: [
            { key: "exception.type", value: { stringValue: "Error" } },
            { key: "exception.stacktrace", value: { stringValue: "at f (app.js:1:1)\n".repeat(100_000) } },
          ],
        },
      ],
    });
    const res = await post(app, "/v1/traces", key, JSON.stringify(jsonTraces([span])), JSON_TYPE);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    const [row] = await storedSpans(deps.db, owner.environmentId);
    const huge = String(row?.attributes.huge);
    expect(huge.length).toBe(4096);
    expect(huge.endsWith("…")).toBe(true);
    expect(Object.keys(row?.attributes ?? {})).toHaveLength(128);
    const stack = String(row?.events[0]?.attributes["exception.stacktrace"]);
    expect(stack.length).toBe(32 * 1024);
  });

  test("characters PostgreSQL cannot store are replaced, not fatal", async ({ app, owner, deps }) => {
    const { key } = await createKey(owner);
    const span = protoSpan({
      name: "nul\u0000here",
      attributes: [{ key: "k\u0000", value: { stringValue: "a\u0000b" } }],
    });
    const res = await post(app, "/v1/traces", key, protoTraces([span]), PROTO_TYPE);
    expect(res.status).toBe(200);
    const [row] = await storedSpans(deps.db, owner.environmentId);
    expect(row?.name).toBe("nul\uFFFDhere");
    expect(row?.attributes).toEqual({ "k\uFFFD": "a\uFFFDb" });
  });

  test("invalid spans are rejected and counted, the rest stored (JSON)", async ({ app, owner, deps }) => {
    const { key } = await createKey(owner);
    const good = jsonSpan({ name: "good" });
    const spans = [
      good,
      jsonSpan({ traceId: "ab".repeat(15) }),
      jsonSpan({ spanId: "00".repeat(8) }),
      jsonSpan({ traceId: "not hex at all, no" }),
      jsonSpan({ endTimeUnixNano: "1" }),
    ];
    const res = await post(app, "/v1/traces", key, JSON.stringify(jsonTraces(spans)), JSON_TYPE);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = (await res.json()) as { partialSuccess: { rejectedSpans: string; errorMessage: string } };
    expect(body.partialSuccess.rejectedSpans).toBe("4");
    expect(body.partialSuccess.errorMessage).toContain("4 spans rejected");
    expect(body.partialSuccess.errorMessage).toContain("trace_id must be 16 bytes and not all zero (2)");
    expect(body.partialSuccess.errorMessage).toContain(
      "end_time_unix_nano is before start_time_unix_nano (1)",
    );
    const rows = await storedSpans(deps.db, owner.environmentId);
    expect(rows.map((r) => r.name)).toEqual(["good"]);
    expect(rows[0]?.traceId).toBe(good.traceId);
  });

  test("invalid spans are rejected and counted, the rest stored (protobuf)", async ({ app, owner, deps }) => {
    const { key } = await createKey(owner);
    const spans = [
      protoSpan(),
      protoSpan({ traceId: randomBytes(15) }),
      protoSpan({ startTimeUnixNano: "0" }),
    ];
    const res = await post(app, "/v1/traces", key, protoTraces(spans), PROTO_TYPE);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-protobuf");
    const body = decodeResponse("traces", await res.arrayBuffer()) as {
      partialSuccess?: { rejectedSpans?: number; errorMessage?: string };
    };
    expect(body.partialSuccess?.rejectedSpans).toBe(2);
    expect(body.partialSuccess?.errorMessage).toContain("start_time_unix_nano is missing (1)");
    expect(await spansOf(deps.db, owner.environmentId)).toBe(1);
  });

  test("a full success answers an empty message; a re-sent batch is not duplicated", async ({
    app,
    owner,
    deps,
  }) => {
    const { key } = await createKey(owner);
    const body = protoTraces([protoSpan(), protoSpan()]);
    for (let i = 0; i < 2; i++) {
      const res = await post(app, "/v1/traces", key, body, PROTO_TYPE);
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBe(0);
    }
    expect(await spansOf(deps.db, owner.environmentId)).toBe(2);
  });

  test("log records with bad ids are rejected; absent ids and times are fine", async ({
    app,
    owner,
    deps,
  }) => {
    const { key } = await createKey(owner);
    const logs = {
      resourceLogs: [
        {
          resource: resource("billing"),
          scopeLogs: [
            {
              logRecords: [
                { severityNumber: 17, body: { stringValue: "no time, no ids" } },
                { traceId: "abc", body: { stringValue: "bad trace id" } },
                { spanId: "0000000000000000", body: { stringValue: "zero span id" } },
                { body: { kvlistValue: { values: [{ key: "user", value: { intValue: "7" } }] } } },
              ],
            },
          ],
        },
      ],
    };
    const res = await post(app, "/v1/logs", key, JSON.stringify(logs), JSON_TYPE);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ partialSuccess: { rejectedLogRecords: "2" } });
    const rows = await deps.db
      .select()
      .from(telemetryLogs)
      .where(eq(telemetryLogs.environmentId, owner.environmentId));
    expect(rows.map((r) => r.body).sort()).toEqual(["no time, no ids", '{"user":7}']);
    expect(rows.every((r) => r.serviceName === "billing" && Date.now() - Date.parse(r.time) < 60_000)).toBe(
      true,
    );
  });
});
