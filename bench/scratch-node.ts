import { decodeExport } from "../src/features/telemetry/decode-export.ts";
import { traceBatch } from "./lib/otlp-batches.ts";
import { toSpanRecords } from "../src/features/telemetry/span-records.ts";
import { OTLP_LIMITS } from "../src/features/telemetry/limits.ts";
import type { TraceRequest } from "../src/features/telemetry/otlp-types.ts";
import { spanCopyText } from "../src/features/telemetry/storage/span-rows.ts";
import { resourceRefs } from "../src/features/telemetry/storage/resources.ts";
import { exceptionsFromSpans } from "../src/features/telemetry/problems/exception-occurrences.ts";
import { identifyOccurrences } from "../src/features/telemetry/problems/group-occurrences.ts";
const batch = traceBatch();
const tenant = { organizationId: "org_x", environmentId: "0b6f2c1e-8d4a-4f3b-9c2d-1e0f9a8b7c6d" };
const bodies = Array.from({ length: 20 }, () => batch.fresh());
const N = 400;
const stages = { decode: 0, records: 0, exceptions: 0, copy: 0 };
for (let round = 0; round < 2; round++) {
  for (const k of Object.keys(stages)) stages[k as keyof typeof stages] = 0;
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const body = bodies[i % bodies.length]!;
    let t = performance.now();
    const req = decodeExport("traces", "protobuf", body) as TraceRequest;
    let u = performance.now(); stages.decode += u - t; t = u;
    const { records } = toSpanRecords(req, new Date(), OTLP_LIMITS);
    u = performance.now(); stages.records += u - t; t = u;
    identifyOccurrences(exceptionsFromSpans(records));
    u = performance.now(); stages.exceptions += u - t; t = u;
    const res = resourceRefs();
    spanCopyText(tenant, records, (r) => res.refOf(r.resourceAttributes, r.serviceName));
    u = performance.now(); stages.copy += u - t;
  }
  const total = performance.now() - t0;
  if (round === 1) {
    for (const [k, v] of Object.entries(stages)) console.log(k.padEnd(12), ((v * 1000) / (N * 512)).toFixed(2), "µs/span");
    console.log("total".padEnd(12), ((total * 1000) / (N * 512)).toFixed(2), "µs/span");
  }
}
