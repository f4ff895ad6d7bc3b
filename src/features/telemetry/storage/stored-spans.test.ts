import { randomBytes } from "node:crypto";
import { describe, expect, test } from "vitest";
import {
  hexId,
  jsonSpan,
  jsonTraces,
  protoSpan,
  protoTraces,
  spanRecord,
} from "../../../../test/lib/telemetry.ts";
import { decodeExport, scanTraceExport } from "../decode-export.ts";
import { OTLP_LIMITS } from "../limits.ts";
import { chunkMessages, otlpMessages } from "../otlp-schema.ts";
import type { Span, TraceRequest } from "../otlp-types.ts";
import { attributesToJson } from "../otlp-values.ts";
import { NO_LATEST, toSpanRecord } from "../span-records.ts";
import type { SpanRecord } from "../telemetry-records.ts";
import { type ChunkSpan, chunkSpans, toChunkSpan, traceChunkWriter } from "./chunk-codec.ts";
import {
  acceptSpans,
  decodedSpans,
  type EncodedSpan,
  encodeRecords,
  MAX_RAW_SPAN_BYTES,
  wireSpans,
} from "./stored-spans.ts";

const now = new Date();

/** The spans as one chunk's bytes, then read back as a chunk row is. */
function roundTrip(spans: EncodedSpan[]): ChunkSpan[] {
  const layout = traceChunkWriter().layout(spans);
  const bytes = Buffer.alloc(layout.length);
  expect(layout.write(bytes, 0)).toBe(layout.length);
  return chunkSpans({ spans: null, spansProto: bytes });
}

/** What ingest stored before spans were kept as OTLP: the bounded record of each span. */
function expectedRecords(request: TraceRequest): ChunkSpan[] {
  const out: ChunkSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resourceAttributes = attributesToJson(rs.resource?.attributes, OTLP_LIMITS);
    const serviceName = String(resourceAttributes["service.name"] ?? "unknown_service");
    for (const ss of rs.scopeSpans ?? []) {
      const context = {
        serviceName,
        scopeName: ss.scope?.name || null,
        resourceAttributes,
        limits: OTLP_LIMITS,
        latest: NO_LATEST,
      };
      for (const span of ss.spans ?? []) {
        const record = toSpanRecord(span, context);
        if (typeof record === "string") continue;
        out.push(toChunkSpan(record, anyResource));
      }
    }
  }
  return out;
}

/** Resource ids are hashes of the attributes; which one is not the point here. */
const anyResource = expect.any(String) as unknown as string;

/** A span that exercises every bound: long text, NUL and lone surrogates, deep and wide values. */
function hostileSpan(): Record<string, unknown> {
  let deep: Record<string, unknown> = { stringValue: "bottom" };
  for (let i = 0; i < 8; i++) deep = { kvlistValue: { values: [{ key: `level${i}`, value: deep }] } };
  const wide = Array.from({ length: 300 }, (_, i) => ({
    key: `k${i}`,
    value: { stringValue: "v".repeat(500) },
  }));
  return protoSpan({
    traceId: randomBytes(16),
    name: `${"n".repeat(5000)}\u0000\ud800`,
    status: { code: 2, message: "m".repeat(10_000) },
    attributes: [
      { key: "__proto__", value: { stringValue: "data, not a prototype" } },
      { key: "42", value: { intValue: "9007199254740993" } },
      { key: "k".repeat(400), value: { doubleValue: 0.1 } },
      { key: "huge", value: { stringValue: "x".repeat(1024 * 1024) } },
      { key: "bytes", value: { bytesValue: randomBytes(64) } },
      { key: "nan", value: { doubleValue: Number.NaN } },
      {
        key: "array",
        value: { arrayValue: { values: Array.from({ length: 200 }, (_, i) => ({ intValue: i })) } },
      },
      { key: "deep", value: deep },
      { key: "empty", value: {} },
      ...wide,
    ],
    events: Array.from({ length: 140 }, (_, i) => ({
      name: i === 0 ? "exception" : `e${i}`,
      timeUnixNano: "1700000000123456789",
      attributes: [
        { key: "exception.type", value: { stringValue: "TypeError" } },
        { key: "exception.stacktrace", value: { stringValue: "at f (a.ts:1:1)\n".repeat(5000) } },
      ],
    })),
    links: [
      {
        traceId: randomBytes(16),
        spanId: randomBytes(8),
        attributes: [{ key: "a", value: { boolValue: true } }],
      },
      { traceId: Buffer.alloc(16), spanId: randomBytes(8) },
    ],
  });
}

describe("spans stored as OTLP", () => {
  test("protobuf spans are kept as the bytes they came in, and read back as their bounded records", () => {
    const spans = [protoSpan(), protoSpan({ parentSpanId: randomBytes(8), kind: 3 }), protoSpan({ kind: 9 })];
    const body = protoTraces(spans);
    const request = decodeExport("traces", "protobuf", body);
    const accepted = acceptSpans(wireSpans(scanTraceExport(body)), now, OTLP_LIMITS);
    expect(accepted.spans).toHaveLength(3);
    for (const s of accepted.spans) {
      // A view into the request body: nothing decoded was encoded again.
      expect(s.bytes.buffer).toBe(body.buffer);
    }
    expect(accepted.spans.map((s) => s.entry)).toEqual([true, false, true]);
    expect(roundTrip(accepted.spans)).toEqual(expectedRecords(request));
  });

  test("OTLP/JSON spans are encoded and read back the same way", () => {
    const json = new TextEncoder().encode(JSON.stringify(jsonTraces([jsonSpan(), jsonSpan({ kind: 1 })])));
    const request = decodeExport("traces", "json", json);
    const accepted = acceptSpans(decodedSpans(request), now, OTLP_LIMITS);
    expect(accepted.spans).toHaveLength(2);
    expect(roundTrip(accepted.spans)).toEqual(expectedRecords(request));
  });

  test("an oversized span is stored as its bounded record, and reads back as if stored raw", () => {
    const body = protoTraces([hostileSpan()]);
    const request = decodeExport("traces", "protobuf", body);
    const accepted = acceptSpans(wireSpans(scanTraceExport(body)), now, OTLP_LIMITS);
    const [stored] = accepted.spans;
    if (!stored) throw new Error("the span was refused");
    expect(body.byteLength).toBeGreaterThan(MAX_RAW_SPAN_BYTES);
    expect(stored.bytes.buffer).not.toBe(body.buffer);
    // Bounded: the 1 MiB value, the long name and message are cut; 140 events become 128.
    expect(stored.bytes.byteLength).toBeLessThan(body.byteLength / 2);
    const [read] = roundTrip(accepted.spans);
    expect(read?.attributes.huge).toHaveLength(OTLP_LIMITS.maxValueChars);
    expect(read?.events).toHaveLength(OTLP_LIMITS.maxEvents);
    expect(read?.links).toHaveLength(1);
    expect(roundTrip(accepted.spans)).toEqual(expectedRecords(request));
    // Its exception is found at ingest, from the record.
    expect(accepted.withEvents).toHaveLength(1);
  });

  test("refused spans are not stored; the others are", () => {
    const body = protoTraces([
      protoSpan({ traceId: Buffer.alloc(16) }),
      protoSpan(),
      protoSpan({ spanId: randomBytes(3) }),
    ]);
    const accepted = acceptSpans(wireSpans(scanTraceExport(body)), now, OTLP_LIMITS);
    expect(accepted.spans).toHaveLength(1);
    expect(accepted.rejected.count).toBe(2);
  });

  test("a path field with another wire type is skipped like the decoder skips it", () => {
    const body = protoTraces([protoSpan(), protoSpan()]);
    // resource_spans (field 1) as a varint: protobufjs treats it as an unknown field.
    const odd = Buffer.concat([Buffer.from([0x08, 0x96, 0x01]), body, Buffer.from([0x08, 0x01])]);
    const request = decodeExport("traces", "protobuf", odd);
    const accepted = acceptSpans(wireSpans(scanTraceExport(odd)), now, OTLP_LIMITS);
    expect(accepted.spans.map((s) => s.bytes.buffer === odd.buffer)).toEqual([true, true]);
    expect(roundTrip(accepted.spans)).toEqual(expectedRecords(request));
  });

  test("a record written directly reads back as itself", () => {
    const records: SpanRecord[] = [
      spanRecord({
        parentSpanId: hexId(8),
        name: "op \ufffd",
        kind: 3,
        startMicros: 1_700_000_000_000_001,
        endMicros: 1_700_000_000_000_003,
        // Not a whole number of microseconds: the start's nanoseconds are chosen to fit.
        durationNs: 1_200,
        statusCode: 2,
        statusMessage: "boom",
        scopeName: "scope",
        attributes: {
          s: "text",
          n: 42,
          big: "9007199254740993",
          d: 0.5,
          huge: 1e300,
          b: false,
          nothing: null,
          list: [1, "two", [3, { four: 4 }]],
          map: { inner: { deeper: "x" } },
          "7": "integer-like key",
        },
        events: [
          { name: "exception", timeUnixNano: "1700000000000002500", attributes: { "exception.type": "E" } },
        ],
        links: [{ traceId: hexId(16), spanId: hexId(8), attributes: { why: "retry" } }],
      }),
      spanRecord(),
    ];
    const { spans } = encodeRecords(records);
    expect(roundTrip(spans)).toEqual(records.map((r) => toChunkSpan(r, anyResource)));
  });

  test("bounds applied to a bounded span change nothing", () => {
    const context = {
      serviceName: "svc",
      scopeName: null,
      resourceAttributes: {},
      limits: OTLP_LIMITS,
      latest: NO_LATEST,
    };
    const type = otlpMessages.traces.request.root.lookupType("opentelemetry.proto.trace.v1.Span");
    const span = type.decode(type.encode(type.fromObject(hostileSpan())).finish()) as unknown as Span;
    const once = toSpanRecord(span, context) as SpanRecord;
    const { spans } = encodeRecords([once]);
    const again = chunkMessages.span.decode(spans[0]?.bytes ?? new Uint8Array()) as unknown as Span;
    expect(toSpanRecord(again, context)).toEqual(once);
  });
});
