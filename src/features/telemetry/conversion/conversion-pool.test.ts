import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import { jsonSpan, jsonTraces, protoSpan, protoTraces } from "../../../../test/lib/telemetry.ts";
import { AppError } from "../../../errors.ts";
import { type ConversionPool, createConversionPool } from "./conversion-pool.ts";
import { convertTraces, type TraceConversion } from "./convert-traces.ts";

const tenant = { organizationId: "org_test", environmentId: "00000000-0000-4000-8000-000000000001" };
const logger = { error: () => {} };
const nowMs = Date.now();

const exception = {
  name: "exception",
  timeUnixNano: String(BigInt(nowMs) * 1_000_000n),
  attributes: [
    { key: "exception.type", value: { stringValue: "TypeError" } },
    { key: "exception.message", value: { stringValue: "order 42 failed" } },
    { key: "exception.stacktrace", value: { stringValue: "TypeError: x\n    at pay (/app/src/pay.ts:1:2)" } },
  ],
};

/** Three spans: one with an exception, one refused (zero trace id), one plain. */
const body = () =>
  protoTraces([protoSpan({ events: [exception] }), protoSpan({ traceId: Buffer.alloc(16) }), protoSpan()]);

const pools: ConversionPool[] = [];
const pool = (options: Partial<Parameters<typeof createConversionPool>[0]> = {}) => {
  const created = createConversionPool({ threads: 1, maxPending: 8, logger, ...options });
  pools.push(created);
  return created;
};
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe("conversion pool", () => {
  test("a worker converts a body exactly as the serving thread would", async () => {
    const input: TraceConversion = { tenant, format: "protobuf", body: body(), nowMs };
    const inline = convertTraces({ ...input, body: input.body.slice() });
    const converted = await pool().convertTraces(input);
    expect(Buffer.isBuffer(converted.rows.chunks)).toBe(true);
    expect(Buffer.isBuffer(converted.rows.entries)).toBe(true);
    expect(converted.rows.chunks.equals(inline.rows.chunks)).toBe(true);
    expect(converted.rows.entries.equals(inline.rows.entries)).toBe(true);
    expect(converted.rows.count).toBe(2);
    expect(converted.rows.resources).toEqual(inline.rows.resources);
    expect(converted.exceptions).toEqual(inline.exceptions);
    expect(converted.exceptions).toHaveLength(1);
    expect(converted.result).toEqual({
      accepted: 2,
      rejected: { count: 1, message: "1 spans rejected: trace_id must be 16 bytes and not all zero (1)" },
    });
  });

  test("OTLP/JSON too, and a malformed body is invalid_request, not a crash", async () => {
    const converter = pool();
    const json = new TextEncoder().encode(JSON.stringify(jsonTraces([jsonSpan()])));
    expect((await converter.convertTraces({ tenant, format: "json", body: json, nowMs })).rows.count).toBe(1);
    const truncated = body().subarray(0, 40);
    const failure = await converter
      .convertTraces({ tenant, format: "protobuf", body: truncated, nowMs })
      .catch((e) => e);
    expect(failure).toBeInstanceOf(AppError);
    expect(failure).toMatchObject({
      code: "invalid_request",
      message: expect.stringMatching(/not a valid OTLP protobuf/),
    });
    expect(converter.threads).toBe(1);
    expect(converter.pending).toBe(0);
  });

  test("a body owning its memory is moved to the worker; a slice of a larger buffer is copied", async () => {
    const converter = pool();
    const whole = body();
    await converter.convertTraces({ tenant, format: "protobuf", body: whole, nowMs });
    expect(whole.byteLength).toBe(0); // detached: moved, not copied
    const backing = Buffer.concat([Buffer.from("header"), body()]);
    const slice = backing.subarray(6);
    await converter.convertTraces({ tenant, format: "protobuf", body: slice, nowMs });
    expect(slice.byteLength).toBe(backing.byteLength - 6);
    expect(backing.subarray(0, 6).toString()).toBe("header");
  });

  test.runIf(process.platform === "linux")(
    "workers run ten steps below the serving thread's priority",
    async () => {
      await pool().convertTraces({ tenant, format: "protobuf", body: body(), nowMs });
      // Linux keeps a nice value per thread: field 19 of /proc/<pid>/task/<tid>/stat.
      const threads = readdirSync(`/proc/${process.pid}/task`).map((tid) => {
        const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, "utf8");
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        return { tid: Number(tid), name, nice: Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]) };
      });
      const workers = threads.filter((t) => t.name.startsWith("patchbay-teleme"));
      expect(workers.length).toBeGreaterThanOrEqual(1);
      const main = threads.find((t) => t.tid === process.pid)?.nice ?? Number.NaN;
      for (const worker of workers) expect(worker.nice).toBe(Math.min(19, main + 10));
    },
  );

  test("conversions beyond maxPending are refused with a retryable 503", async () => {
    const converter = pool({ maxPending: 1 });
    const first = converter.convertTraces({ tenant, format: "protobuf", body: body(), nowMs });
    const second = await converter
      .convertTraces({ tenant, format: "protobuf", body: body(), nowMs })
      .catch((e) => e);
    expect(second).toMatchObject({ code: "service_unavailable", details: { retryAfterSeconds: 1 } });
    expect((await first).rows.count).toBe(2);
  });

  test("a worker that dies fails its conversions with a retryable 503 and is replaced", async () => {
    const dir = mkdtempSync(join(tmpdir(), "patchbay-conversion-"));
    const entry = join(dir, "dying-worker.mjs");
    writeFileSync(
      entry,
      'import { parentPort } from "node:worker_threads";\nparentPort.on("message", () => process.exit(3));\n',
    );
    const errors: unknown[] = [];
    const converter = pool({
      entry: pathToFileURL(entry),
      logger: { error: (o: unknown) => errors.push(o) },
    });
    const failure = await converter
      .convertTraces({ tenant, format: "protobuf", body: body(), nowMs })
      .catch((e) => e);
    expect(failure).toMatchObject({ code: "service_unavailable", details: { retryAfterSeconds: 5 } });
    expect(errors).toHaveLength(1);
    expect(converter.threads).toBe(0);
    expect(converter.pending).toBe(0);
    // The next conversion starts a new thread (which dies again here: still a 503, never a hang).
    await expect(
      converter.convertTraces({ tenant, format: "protobuf", body: body(), nowMs }),
    ).rejects.toMatchObject({
      code: "service_unavailable",
    });
  });

  test("close terminates the threads; later conversions run inline", async () => {
    const converter = pool();
    await converter.convertTraces({ tenant, format: "protobuf", body: body(), nowMs });
    expect(converter.threads).toBe(1);
    await converter.close();
    expect(converter.threads).toBe(0);
    const after = await converter.convertTraces({ tenant, format: "protobuf", body: body(), nowMs });
    expect(after.rows.count).toBe(2);
    expect(converter.threads).toBe(0);
  });
});
