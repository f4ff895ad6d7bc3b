import { eq } from "drizzle-orm";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { spanRecord, spansOf } from "../../../test/lib/telemetry.ts";
import { problemDeferredLogs, problemSpans } from "../../platform/db/schema/problems.ts";
import {
  telemetryLogs,
  telemetryMetricPoints,
  telemetryRequests,
  telemetryResources,
} from "../../platform/db/schema/telemetry.ts";
import { createPostgresTelemetryStore } from "./postgres-telemetry-store.ts";
import { sweepTelemetry } from "./sweep-telemetry.ts";
import type { SpanRecord } from "./telemetry-records.ts";

const daysAgo = (days: number, now: Date) => new Date(now.getTime() - days * 86_400_000).toISOString();

const span = (startTime: string): SpanRecord =>
  spanRecord({ startMicros: Date.parse(startTime) * 1000, endMicros: Date.parse(startTime) * 1000 });

describe("telemetry retention", () => {
  test("sweepTelemetry deletes rows older than the retention, in batches, and keeps the rest", async ({
    deps,
    owner,
  }) => {
    const now = new Date();
    const store = createPostgresTelemetryStore({
      database: deps.database,
      logger: deps.logger,
      clock: deps.clock,
    });
    const tenant = { organizationId: owner.organizationId, environmentId: owner.environmentId };
    // More than one INSERT chunk (500) and several delete batches.
    const old = Array.from({ length: 1_234 }, () => span(daysAgo(8, now)));
    await store.prepareSpans(tenant, [...old, span(daysAgo(6, now)), span(daysAgo(0, now))]).write();
    const log = (time: string) => ({
      time,
      severityNumber: 9,
      severityText: null,
      body: "b",
      serviceName: "svc",
      traceId: null,
      spanId: null,
      eventName: null,
      scopeName: null,
      attributes: {},
      resourceAttributes: {},
    });
    await store.prepareLogs(tenant, [log(daysAgo(30, now)), log(daysAgo(1, now))]).write();
    const point = (time: string) => ({
      name: "m",
      type: "gauge" as const,
      unit: null,
      serviceName: "svc",
      resourceAttributes: {},
      time,
      startTime: null,
      value: 1,
      data: null,
      attributes: {},
    });
    await store.prepareMetricPoints(tenant, [point(daysAgo(7.5, now)), point(daysAgo(2, now))]).write();
    // Resources outlive the retention by two days: rows may still point to them until then.
    const resource = (id: bigint, lastSeen: string) => ({
      environmentId: owner.environmentId,
      resourceId: id,
      organizationId: owner.organizationId,
      serviceName: "old",
      attributes: { "service.name": "old" },
      firstSeen: lastSeen,
      lastSeen,
    });
    await deps.db.insert(telemetryRequests).values([
      { environmentId: owner.environmentId, requestKey: "0a".repeat(16), receivedAt: daysAgo(8, now) },
      { environmentId: owner.environmentId, requestKey: "0b".repeat(16), receivedAt: daysAgo(1, now) },
    ]);
    await deps.db
      .insert(telemetryResources)
      .values([resource(1n, daysAgo(9.5, now)), resource(2n, daysAgo(8.5, now))]);
    const failingSpan = (spanId: string, recordedAt: string) => ({
      environmentId: owner.environmentId,
      traceId: "0c".repeat(16),
      spanId,
      fingerprint: "sha256:x",
      recordedAt,
    });
    await deps.db
      .insert(problemSpans)
      .values([failingSpan("01".repeat(8), daysAgo(8, now)), failingSpan("02".repeat(8), daysAgo(1, now))]);
    await deps.db.insert(problemDeferredLogs).values({
      organizationId: owner.organizationId,
      environmentId: owner.environmentId,
      occurrence: {},
      receivedAt: daysAgo(8, now),
    });

    expect(await sweepTelemetry(deps.db, now, 7, { batch: 500 })).toEqual({
      spans: 1_234,
      // Each span here is a trace's root: an entry span too.
      entrySpans: 1_234,
      requestKeys: 1,
      logs: 1,
      metricPoints: 1,
      resources: 1,
      problems: 0,
      problemSpans: 1,
      deferredLogs: 1,
    });
    expect(await spansOf(deps.db, owner.environmentId)).toBe(2);
    expect(
      await deps.db.select().from(telemetryLogs).where(eq(telemetryLogs.environmentId, owner.environmentId)),
    ).toHaveLength(1);
    expect(
      await deps.db
        .select()
        .from(telemetryMetricPoints)
        .where(eq(telemetryMetricPoints.environmentId, owner.environmentId)),
    ).toHaveLength(1);
    expect(await sweepTelemetry(deps.db, now, 7)).toEqual({
      spans: 0,
      entrySpans: 0,
      requestKeys: 0,
      logs: 0,
      metricPoints: 0,
      resources: 0,
      problems: 0,
      problemSpans: 0,
      deferredLogs: 0,
    });
    store.close();
  });
});
