import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, test } from "vitest";
import { createTestDatabase } from "../../../../test/database.ts";
import { spanRecord } from "../../../../test/lib/telemetry.ts";
import { migrateDatabase } from "../../../platform/db/migrate.ts";
import { migrationsFolder } from "../../../platform/db/pglite-template.ts";
import { rowsOf } from "../../../platform/db/result-rows.ts";
import { createLogger } from "../../../platform/logging/logger.ts";
import { createPostgresTelemetryStore } from "../postgres-telemetry-store.ts";

/** The committed migrations up to and including `lastTag`: the database as it was before the next. */
function migrationsUpTo(lastTag: string): string {
  const folder = mkdtempSync(join(tmpdir(), "patchbay-migrations-"));
  cpSync(migrationsFolder, folder, { recursive: true });
  const journalPath = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: { tag: string }[] };
  const last = journal.entries.findIndex((e) => e.tag === lastTag);
  if (last < 0) throw new Error(`no migration ${lastTag}`);
  journal.entries = journal.entries.slice(0, last + 1);
  writeFileSync(journalPath, JSON.stringify(journal));
  return folder;
}

const environmentId = "5b0c6a3e-2f41-4a8e-9d77-1c2b3a4d5e6f";
const traceA = "0af7651916cd43dd8448eb211c80319c";
const traceB = "ff000000000000000000000000000001";

describe("migrations 0014 and 0016: spans per trace chunk, then as OTLP", () => {
  const folder = migrationsUpTo("0013_hex_ids_collate_c");
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  test("spans stored before move into chunks and entry spans, and read back unchanged", async () => {
    const database = await createTestDatabase({ migrate: false });
    try {
      await migrateDatabase(database.handle, folder);
      const { db } = database.handle;
      await db.execute(sql`
        insert into telemetry_resources
          (environment_id, resource_id, organization_id, service_name, attributes, first_seen, last_seen)
        values (${environmentId}, 42, 'org_1', 'shop', '{"service.name":"shop"}', now(), now())`);
      await db.execute(sql`
        insert into telemetry_spans
          (organization_id, environment_id, trace_id, span_id, parent_span_id, service_name, name, kind,
           start_time, end_time, duration_ns, status_code, status_message, scope_name, resource_id,
           attributes, events, links)
        values
          ('org_1', ${environmentId}, ${traceA}, '00f067aa0ba902b7', null, 'shop', 'POST /checkout', 2,
           '2026-11-20T10:00:00.000001Z', '2026-11-20T10:00:00.012001Z', 12000000, 2, 'boom', 'http', 42,
           '{"http.route":"/checkout","n":1}',
           '[{"name":"exception","timeUnixNano":"1795168800005000000","attributes":{"exception.type":"Error"}}]',
           '[]'),
          ('org_1', ${environmentId}, ${traceA}, '1111111111111111', '00f067aa0ba902b7', 'shop', 'pg.query', 3,
           '2026-11-20T10:00:00.000200Z', '2026-11-20T10:00:00.001700Z', 1500000, 0, null, null, 42,
           '{}', '[]', '[{"traceId":"${sql.raw(traceB)}","spanId":"2222222222222222","attributes":{}}]'),
          ('org_1', ${environmentId}, ${traceB}, '3333333333333333', null, 'worker', 'job', 1,
           '2026-11-20T10:00:01Z', '2026-11-20T10:00:02Z', 1000000000, 0, null, null, 0, '{}', '[]', '[]')`);

      await migrateDatabase(database.handle);

      const tables = rowsOf(
        await db.execute(sql`select to_regclass('telemetry_spans')::text as old, count(*)::int as chunks
                               from telemetry_trace_chunks`),
      );
      expect(tables).toEqual([{ old: null, chunks: 2 }]);

      const store = createPostgresTelemetryStore({
        database: database.handle,
        logger: createLogger({ level: "silent" }),
        clock: () => new Date("2026-11-20T12:00:00Z"),
      });
      const spans = await store.traceSpans(environmentId, traceA, 10);
      expect(spans).toEqual([
        {
          traceId: traceA,
          spanId: "00f067aa0ba902b7",
          parentSpanId: null,
          serviceName: "shop",
          name: "POST /checkout",
          kind: 2,
          startTime: "2026-11-20T10:00:00.000001Z",
          endTime: "2026-11-20T10:00:00.012001Z",
          durationNs: 12_000_000,
          statusCode: 2,
          statusMessage: "boom",
          scopeName: "http",
          attributes: { "http.route": "/checkout", n: 1 },
          resourceAttributes: { "service.name": "shop" },
          events: [
            {
              name: "exception",
              timeUnixNano: "1795168800005000000",
              attributes: { "exception.type": "Error" },
            },
          ],
          links: [],
        },
        {
          traceId: traceA,
          spanId: "1111111111111111",
          parentSpanId: "00f067aa0ba902b7",
          serviceName: "shop",
          name: "pg.query",
          kind: 3,
          startTime: "2026-11-20T10:00:00.000200Z",
          endTime: "2026-11-20T10:00:00.001700Z",
          durationNs: 1_500_000,
          statusCode: 0,
          statusMessage: null,
          scopeName: null,
          attributes: {},
          resourceAttributes: { "service.name": "shop" },
          events: [],
          links: [{ traceId: traceB, spanId: "2222222222222222", attributes: {} }],
        },
      ]);

      // Migration 0016: chunks written from now on hold OTLP spans (spans_proto); the JSON chunks
      // above stay readable, also next to a new chunk of the same trace.
      const later = spanRecord({
        traceId: traceA,
        spanId: "4444444444444444",
        parentSpanId: "00f067aa0ba902b7",
        serviceName: "shop",
        name: "cache.get",
        kind: 3,
        startMicros: Date.parse("2026-11-20T10:00:00.005Z") * 1000,
        endMicros: Date.parse("2026-11-20T10:00:00.006Z") * 1000,
        durationNs: 1_000_000,
        scopeName: "cache",
        attributes: { hit: true },
        resourceAttributes: { "service.name": "shop" },
      });
      await store.prepareSpans({ organizationId: "org_1", environmentId }, [later]).write();
      const formats = rowsOf(
        await db.execute(sql`select spans is not null as json, spans_proto is not null as proto
                               from telemetry_trace_chunks where trace_id = ${traceA} order by start_time`),
      );
      expect(formats).toEqual([
        { json: true, proto: false },
        { json: false, proto: true },
      ]);
      const merged = await store.traceSpans(environmentId, traceA, 10);
      expect(merged.map((s) => [s.spanId, s.name, s.scopeName, s.attributes])).toEqual([
        ["00f067aa0ba902b7", "POST /checkout", "http", { "http.route": "/checkout", n: 1 }],
        ["1111111111111111", "pg.query", null, {}],
        ["4444444444444444", "cache.get", "cache", { hit: true }],
      ]);
      const neither = await db
        .execute(sql`insert into telemetry_trace_chunks
                       (organization_id, environment_id, trace_id, chunk_id, start_time, last_start, span_count)
                     values ('org_1', ${environmentId}, ${traceB}, 'aaaaaaaaaaaaaaaa', now(), now(), 1)`)
        .then(
          () => "stored",
          (error: { cause?: { message?: string } }) => error.cause?.message,
        );
      expect(neither).toMatch(/violates check constraint "telemetry_trace_chunks_one_format"/);

      // The two roots are entry spans; the client span is not.
      const health = await store.serviceHealth(environmentId, {
        from: "2026-11-20T09:00:00Z",
        to: "2026-11-20T11:00:00Z",
        limit: 10,
      });
      expect(health.map((h) => [h.serviceName, h.requests, h.errors, h.p50Ns])).toEqual([
        ["shop", 1, 1, 12_000_000],
        ["worker", 1, 0, 1_000_000_000],
      ]);
      store.close();
    } finally {
      await database.drop();
    }
  });
});
