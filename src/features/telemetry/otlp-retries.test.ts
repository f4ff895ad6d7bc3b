import { gzipSync } from "node:zlib";
import { eq } from "drizzle-orm";
import { describe, expect, test } from "../../../test/fixtures.ts";
import {
  createKey,
  encodeRequest,
  JSON_TYPE,
  jsonLog,
  jsonLogs,
  nanosAgo,
  PROTO_TYPE,
  post,
  resource,
} from "../../../test/lib/telemetry.ts";
import { telemetryLogs, telemetryMetricPoints } from "../../platform/db/schema/telemetry.ts";

// Exporters re-send a request whose answer they did not get (timeout, connection reset, 503).
describe("OTLP retries of log and metric requests", () => {
  test("a re-sent log request is stored once and its errors counted once", async ({ app, owner, deps }) => {
    const { key } = await createKey(owner);
    const error = jsonLog({
      severityNumber: 17,
      severityText: "ERROR",
      body: { stringValue: "payment 7 failed" },
    });
    const body = JSON.stringify(jsonLogs([jsonLog({ body: { stringValue: "hello" } }), error], "retry"));
    for (const encoding of ["identity", "gzip", "identity"]) {
      const res =
        encoding === "gzip"
          ? await post(app, "/v1/logs", key, gzipSync(body), { ...JSON_TYPE, "content-encoding": "gzip" })
          : await post(app, "/v1/logs", key, body, JSON_TYPE);
      expect(res.status).toBe(200);
    }
    const logs = await deps.db
      .select()
      .from(telemetryLogs)
      .where(eq(telemetryLogs.environmentId, owner.environmentId));
    expect(logs.map((l) => l.body).sort()).toEqual(["hello", "payment 7 failed"]);
    const problems = await owner.api.get(`/environments/${owner.environmentId}/problems?service=retry`);
    expect(((await problems.json()) as { items: { count: number }[] }).items).toMatchObject([{ count: 1 }]);

    // A request that differs in anything (here one record's time) is new.
    await post(
      app,
      "/v1/logs",
      key,
      JSON.stringify(jsonLogs([jsonLog({ body: { stringValue: "hello" } })], "retry")),
      JSON_TYPE,
    );
    expect(await deps.db.$count(telemetryLogs, eq(telemetryLogs.environmentId, owner.environmentId))).toBe(3);
  });

  test("records without any timestamp are stored each time: they may be distinct events", async ({
    app,
    owner,
    deps,
  }) => {
    const { key } = await createKey(owner);
    const body = JSON.stringify(jsonLogs([{ severityNumber: 9, body: { stringValue: "tick" } }], "untimed"));
    for (let i = 0; i < 2; i++) expect((await post(app, "/v1/logs", key, body, JSON_TYPE)).status).toBe(200);
    expect(await deps.db.$count(telemetryLogs, eq(telemetryLogs.environmentId, owner.environmentId))).toBe(2);
  });

  test("a re-sent metrics request is stored once; keys are per environment", async ({
    app,
    owner,
    stranger,
    deps,
  }) => {
    const request = {
      resourceMetrics: [
        {
          resource: resource("retry"),
          scopeMetrics: [
            {
              metrics: [
                {
                  name: "queue.depth",
                  gauge: { dataPoints: [{ timeUnixNano: nanosAgo(1_000), asInt: 12 }] },
                },
              ],
            },
          ],
        },
      ],
    };
    const body = encodeRequest("metrics", request);
    const { key } = await createKey(owner);
    for (let i = 0; i < 3; i++)
      expect((await post(app, "/v1/metrics", key, body, PROTO_TYPE)).status).toBe(200);
    const count = (environmentId: string) =>
      deps.db.$count(telemetryMetricPoints, eq(telemetryMetricPoints.environmentId, environmentId));
    expect(await count(owner.environmentId)).toBe(1);
    // The same bytes from another environment's key are that environment's own first request.
    const other = await createKey(stranger);
    expect((await post(app, "/v1/metrics", other.key, body, PROTO_TYPE)).status).toBe(200);
    expect(await count(stranger.environmentId)).toBe(1);
  });
});
