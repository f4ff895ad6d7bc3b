import { sql } from "drizzle-orm";
import { describe, expect, test } from "../../../../test/fixtures.ts";
import { hexId, spanRecord } from "../../../../test/lib/telemetry.ts";
import { createPostgresTelemetryStore } from "../postgres-telemetry-store.ts";
import type { SpanRecord } from "../telemetry-records.ts";

const span = (traceId: string, spanId: string, parentSpanId: string | null, startTime: string): SpanRecord =>
  spanRecord({
    traceId,
    spanId,
    parentSpanId,
    kind: parentSpanId === null ? 2 : 1,
    startMicros: Date.parse(startTime) * 1000,
    endMicros: Date.parse(startTime) * 1000,
  });

describe("trace and span ids compared bytewise", () => {
  test('the id columns of trace chunks, entry spans and logs use COLLATE "C"', async ({ deps }) => {
    const result = await deps.db.execute(
      sql`select table_name, column_name, collation_name from information_schema.columns
          where table_name in ('telemetry_trace_chunks', 'telemetry_entry_spans', 'telemetry_logs')
            and column_name in ('trace_id', 'span_id', 'chunk_id')
          order by table_name, column_name`,
    );
    const rows = Array.isArray(result) ? result : (result as { rows: unknown[] }).rows;
    expect(rows).toEqual([
      { table_name: "telemetry_entry_spans", column_name: "chunk_id", collation_name: "C" },
      { table_name: "telemetry_entry_spans", column_name: "trace_id", collation_name: "C" },
      { table_name: "telemetry_logs", column_name: "span_id", collation_name: "C" },
      { table_name: "telemetry_logs", column_name: "trace_id", collation_name: "C" },
      { table_name: "telemetry_trace_chunks", column_name: "chunk_id", collation_name: "C" },
      { table_name: "telemetry_trace_chunks", column_name: "trace_id", collation_name: "C" },
    ]);
  });

  test("a trace is stored, re-sent through the staging table and read back by its id", async ({
    deps,
    owner,
  }) => {
    const store = createPostgresTelemetryStore({
      database: deps.database,
      logger: deps.logger,
      clock: deps.clock,
    });
    const tenant = { organizationId: owner.organizationId, environmentId: owner.environmentId };
    const traceId = hexId(16);
    const root = hexId(8);
    const at = new Date().toISOString();
    const first = [span(traceId, root, null, at), span(traceId, "00000000000000ff", root, at)];
    await store.prepareSpans(tenant, first).write();
    // A request re-sent with one more span: another chunk, its spans read back once each.
    await store.prepareSpans(tenant, [...first, span(traceId, "ff00000000000000", root, at)]).write();

    const stored = await store.traceSpans(owner.environmentId, traceId, 10);
    // Equal start times: ordered by span id, bytewise.
    expect(stored.map((s) => s.spanId)).toEqual(
      ["00000000000000ff", "ff00000000000000", root].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    expect(stored.every((s) => s.traceId === traceId)).toBe(true);
    expect(stored.find((s) => s.spanId === "00000000000000ff")?.parentSpanId).toBe(root);
  });
});
