import postgres from "postgres";
import { sql } from "drizzle-orm";
import { openDatabase } from "../src/db/client.ts";
import { migrateDatabase } from "../src/db/migrate.ts";
import { decodeExport } from "../src/features/telemetry/decode-export.ts";
import { traceBatch } from "./lib/otlp-batches.ts";
import { toSpanRecords } from "../src/features/telemetry/span-records.ts";
import { OTLP_LIMITS } from "../src/features/telemetry/limits.ts";
import type { TraceRequest } from "../src/features/telemetry/otlp-types.ts";
import { spanCopyText } from "../src/features/telemetry/storage/span-rows.ts";
import { resourceRefs } from "../src/features/telemetry/storage/resources.ts";
import { telemetryDatabase } from "../src/features/telemetry/storage/sql-runner.ts";
import { postgresCpuSeconds, processCpuSeconds } from "./lib/processes.ts";

const batch = traceBatch();
const name = `scratch_${Date.now()}`;
const admin = postgres("postgres://postgres@127.0.0.1:5432/postgres", { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${name}`);
const handle = await openDatabase({ kind: "postgres", url: `postgres://postgres@127.0.0.1:5432/${name}` });
await migrateDatabase(handle);
for (const stmt of (process.env.ALTER ?? "").split(";").filter(Boolean)) await handle.db.execute(sql.raw(stmt));
const tenant = { organizationId: "org_x", environmentId: "0b6f2c1e-8d4a-4f3b-9c2d-1e0f9a8b7c6d" };
const N = Number(process.env.N ?? 300);
const transform = process.env.NOEVENTS ? (b: Buffer) => Buffer.from(b.toString().replace(/\t\[\]\t\[\]\n/g, "\t\\N\t\\N\n")) : (b: Buffer) => b;
const pre = Array.from({ length: N }, () => {
  const recs = toSpanRecords(decodeExport("traces", "protobuf", batch.fresh()) as TraceRequest, new Date(), OTLP_LIMITS).records;
  const res = resourceRefs();
  return transform(spanCopyText(tenant, recs, (r) => res.refOf(r.resourceAttributes, r.serviceName)));
});
const db = telemetryDatabase(handle);
const W = Number(process.env.W ?? 4);
const pg0 = postgresCpuSeconds() ?? 0; const me0 = processCpuSeconds(process.pid) ?? 0;
let i = 0;
const t = performance.now();
await Promise.all(Array.from({ length: W }, async () => {
  while (i < N) {
    const data = pre[i++]!;
    await db.transaction(async (run) => { await run.copyIn("telemetry_spans (organization_id, environment_id, trace_id, span_id, parent_span_id, service_name, name, kind, start_time, end_time, duration_ns, status_code, status_message, scope_name, resource_id, attributes, events, links)", data); });
  }
}));
const dt = (performance.now() - t) / 1000;
const pgCpu = (postgresCpuSeconds() ?? 0) - pg0;
console.log(`${process.env.LABEL ?? ""} rows/s ${Math.round((N * 512) / dt)}  pg µs/row ${((pgCpu * 1e6) / (N * 512)).toFixed(2)}  node µs/row ${((((processCpuSeconds(process.pid) ?? 0) - me0) * 1e6) / (N * 512)).toFixed(2)}`);
await handle.close();
await admin.unsafe(`drop database ${name} with (force)`);
await admin.end();
