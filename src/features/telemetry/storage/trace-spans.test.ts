import { describe, expect, test } from "../../../../test/fixtures.ts";
import { hexId, spanRecord } from "../../../../test/lib/telemetry.ts";
import { createPostgresTelemetryStore } from "../postgres-telemetry-store.ts";
import type { SpanRecord } from "../telemetry-records.ts";

const T0 = Date.parse("2026-11-20T10:00:00Z") * 1000;

const span = (traceId: string, spanId: string, offsetMicros: number): SpanRecord =>
  spanRecord({
    traceId,
    spanId,
    parentSpanId: offsetMicros === 0 ? null : "0000000000000001",
    name: `at ${offsetMicros}`,
    startMicros: T0 + offsetMicros,
    endMicros: T0 + offsetMicros + 5,
    durationNs: 5000,
  });

describe("reading a trace stored in several chunks", () => {
  test("the earliest spans across chunks, each once, within the limit", async ({ deps, owner }) => {
    const store = createPostgresTelemetryStore({
      database: deps.database,
      logger: deps.logger,
      clock: deps.clock,
    });
    const tenant = { organizationId: owner.organizationId, environmentId: owner.environmentId };
    const traceId = hexId(16);
    const write = (spans: SpanRecord[]) => store.prepareSpans(tenant, spans).write();
    // Three requests of one trace: chunk 2 starts after chunk 1 but holds spans inside it.
    await write([span(traceId, "0000000000000001", 0), span(traceId, "00000000000000a0", 100)]);
    await write([span(traceId, "0000000000000050", 50), span(traceId, "0000000000000060", 60)]);
    await write([span(traceId, "0000000000000200", 200)]);
    // A fourth re-sends one span with a new one (another composition: another chunk).
    await write([span(traceId, "0000000000000060", 60), span(traceId, "0000000000000010", 10)]);

    const offsets = async (limit: number) =>
      (await store.traceSpans(owner.environmentId, traceId, limit)).map((s) => s.name);
    expect(await offsets(3)).toEqual(["at 0", "at 10", "at 50"]);
    expect(await offsets(4)).toEqual(["at 0", "at 10", "at 50", "at 60"]);
    expect(await offsets(100)).toEqual(["at 0", "at 10", "at 50", "at 60", "at 100", "at 200"]);
    expect(await offsets(1)).toEqual(["at 0"]);
    // Another environment's read of the same trace id finds nothing.
    expect(await store.traceSpans(crypto.randomUUID(), traceId, 100)).toEqual([]);
    store.close();
  });
});
