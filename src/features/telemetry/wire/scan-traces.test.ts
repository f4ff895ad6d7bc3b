import protobuf from "protobufjs";
import { describe, expect, test } from "vitest";
import { encodeRequest, protoSpan } from "../../../../test/lib/telemetry.ts";
import { toNanos } from "../otlp-scalars.ts";
import { otlpMessages } from "../otlp-schema.ts";
import type { Span } from "../otlp-types.ts";
import { decodeSpan, type ScannedTraces, scanTraces } from "./scan-traces.ts";

// The scan must be the decoder's twin: the same bodies accepted, the same values read. Every
// body here goes through both, protobufjs's `Type.decode` as the oracle.

const request = otlpMessages.traces.request;
const spanType = request.lookupType("opentelemetry.proto.trace.v1.Span");
const resourceType = request.lookupType("opentelemetry.proto.resource.v1.Resource");
const scopeType = request.lookupType("opentelemetry.proto.common.v1.InstrumentationScope");
const plain = (type: typeof spanType, message: unknown) =>
  type.toObject(message as never, { longs: String, bytes: String, enums: Number });

const verdict = (run: () => unknown): string => {
  try {
    run();
    return "accepted";
  } catch {
    return "refused";
  }
};

/** Both read `body` alike: verdict, resources, scopes, and every span's fields and message. */
function expectTwins(body: Uint8Array, label: string): boolean {
  const decoded = verdict(() => request.decode(body));
  expect(
    verdict(() => scanTraces(body)),
    label,
  ).toBe(decoded);
  if (decoded === "refused") return false;
  const full = request.decode(body) as unknown as {
    resourceSpans?: { resource?: unknown; scopeSpans?: { scope?: unknown; spans?: Span[] }[] }[];
  };
  const scanned = scanTraces(body);
  const resourceSpans = full.resourceSpans ?? [];
  expect(scanned.resourceSpans, label).toHaveLength(resourceSpans.length);
  resourceSpans.forEach((rs, i) => {
    const scannedRs = scanned.resourceSpans[i] as ScannedTraces["resourceSpans"][number];
    expect(optional(resourceType, scannedRs.resource), label).toEqual(optional(resourceType, rs.resource));
    const scopeSpans = rs.scopeSpans ?? [];
    expect(scannedRs.scopeSpans, label).toHaveLength(scopeSpans.length);
    scopeSpans.forEach((ss, j) => {
      const scannedSs = scannedRs.scopeSpans[
        j
      ] as ScannedTraces["resourceSpans"][number]["scopeSpans"][number];
      expect(optional(scopeType, scannedSs.scope), label).toEqual(optional(scopeType, ss.scope));
      const spans = ss.spans ?? [];
      expect(scannedSs.spans, label).toHaveLength(spans.length);
      spans.forEach((span, k) => {
        const wire = scannedSs.spans[k];
        if (!wire) throw new Error("missing span");
        expect(plain(spanType, decodeSpan(scanned, wire)), label).toEqual(plain(spanType, span));
        expect(keyFields(wire), label).toEqual(keyFields(span));
        expect(wire.hasEvents, label).toBe((span.events?.length ?? 0) > 0);
      });
    });
  });
  return true;
}

const optional = (type: typeof spanType, message: unknown) =>
  message === undefined || message === null ? null : plain(type, message);

/** What `checkSpan` reads, in comparable form. */
const keyFields = (span: Span) => ({
  traceId: hex(span.traceId),
  spanId: hex(span.spanId),
  parentSpanId: hex(span.parentSpanId),
  kind: span.kind ?? 0,
  start: toNanos(span.startTimeUnixNano),
  end: toNanos(span.endTimeUnixNano),
  statusCode: span.status?.code ?? 0,
});
const hex = (bytes: Uint8Array | undefined) => (bytes?.length ? Buffer.from(bytes).toString("hex") : "");

/** Every field kind the trace schema has, in several resources, scopes and spans. */
function richBody(): Uint8Array {
  const value = (depth: number): Record<string, unknown> =>
    depth === 0
      ? { stringValue: "leaf é 漢" }
      : {
          kvlistValue: {
            values: [
              { key: `k${depth}`, value: value(depth - 1) },
              { key: "arr", value: { arrayValue: { values: [{ intValue: -depth }, { doubleValue: 1.5 }] } } },
            ],
          },
        };
  const attributes = [
    { key: "s", value: { stringValue: "text" } },
    { key: "b", value: { boolValue: true } },
    { key: "i", value: { intValue: "-9007199254740993" } },
    { key: "d", value: { doubleValue: -0.25 } },
    { key: "bytes", value: { bytesValue: Buffer.from([0, 255, 128]) } },
    { key: "nested", value: value(3) },
    { key: "empty", value: {} },
  ];
  const span = (i: number) =>
    protoSpan({
      parentSpanId: i % 2 ? Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]) : undefined,
      traceState: "vendor=1",
      kind: i % 6,
      flags: 257,
      attributes,
      droppedAttributesCount: 2,
      events:
        i % 3 === 0
          ? [
              {
                name: "exception",
                timeUnixNano: "1700000000000000001",
                attributes,
                droppedAttributesCount: 1,
              },
            ]
          : [],
      droppedEventsCount: 3,
      links: [
        { traceId: Buffer.alloc(16, 7), spanId: Buffer.alloc(8, 9), traceState: "x", attributes, flags: 1 },
      ],
      droppedLinksCount: 4,
      status: { code: i % 3, message: i % 2 ? "bad" : "" },
    });
  const resource = (name: string) => ({
    attributes: [{ key: "service.name", value: { stringValue: name } }, ...attributes],
    droppedAttributesCount: 5,
    entityRefs: [{ schemaUrl: "u", type: "service", idKeys: ["service.name"], descriptionKeys: ["a", "b"] }],
  });
  return encodeRequest("traces", {
    resourceSpans: [
      {
        resource: resource("api"),
        schemaUrl: "https://opentelemetry.io/schemas/1.21.0",
        scopeSpans: [
          {
            scope: { name: "http", version: "1", attributes, droppedAttributesCount: 1 },
            spans: [0, 1, 2].map(span),
          },
          { spans: [3].map(span), schemaUrl: "s" },
        ],
      },
      { resource: resource("worker"), scopeSpans: [{ scope: { name: "jobs" }, spans: [4, 5].map(span) }] },
      {},
    ],
  });
}

/** A small deterministic generator (mulberry32), so a failure can be replayed from its seed. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, below: (n: number) => Math.floor(next() * n) };
}

/** One random edit: a byte changed, bytes cut, inserted, duplicated or dropped, a varint spliced in. */
function mutate(body: Uint8Array, rnd: ReturnType<typeof random>): Uint8Array {
  const at = rnd.below(body.length);
  const bytes = Buffer.from(body);
  switch (rnd.below(7)) {
    case 0:
      bytes[at] = rnd.below(256);
      return bytes;
    case 1:
      bytes[at] = (bytes[at] as number) ^ (1 << rnd.below(8));
      return bytes;
    case 2:
      return bytes.subarray(0, at);
    case 3: {
      const extra = Buffer.from(Array.from({ length: 1 + rnd.below(4) }, () => rnd.below(256)));
      return Buffer.concat([bytes.subarray(0, at), extra, bytes.subarray(at)]);
    }
    case 4: {
      const end = Math.min(bytes.length, at + 1 + rnd.below(40));
      return Buffer.concat([bytes.subarray(0, end), bytes.subarray(at, end), bytes.subarray(end)]);
    }
    case 5:
      return Buffer.concat([
        bytes.subarray(0, at),
        bytes.subarray(Math.min(bytes.length, at + 1 + rnd.below(8))),
      ]);
    default: {
      // A tag of a small field number with any wire type: exercises wrong wire types and skips.
      const tag = ((1 + rnd.below(16)) << 3) | rnd.below(8);
      return Buffer.concat([bytes.subarray(0, at), Buffer.from([tag]), bytes.subarray(at)]);
    }
  }
}

describe("scanTraces reads a body as protobufjs's decoder does", () => {
  test("valid bodies: every resource, scope and span alike", () => {
    expect(expectTwins(richBody(), "rich body")).toBe(true);
    expect(expectTwins(new Uint8Array(0), "empty body")).toBe(true);
  });

  test("thousands of mutated bodies: the same verdict, and the same values when accepted", () => {
    const seed = Number(process.env.SCAN_FUZZ_SEED ?? 20261126);
    const rnd = random(seed);
    const base = richBody();
    let accepted = 0;
    const runs = 4000;
    for (let i = 0; i < runs; i++) {
      let body: Uint8Array = base;
      const edits = 1 + rnd.below(3);
      for (let e = 0; e < edits && body.length > 0; e++) body = mutate(body, rnd);
      if (expectTwins(body, `seed ${seed}, body ${i}: ${Buffer.from(body).toString("base64")}`)) accepted++;
    }
    // Both verdicts must occur often, or the comparison proves little.
    expect(accepted).toBeGreaterThan(runs / 20);
    expect(accepted).toBeLessThan(runs - runs / 20);
  });

  test("thousands of bodies generated from the schema, odd encodings included", () => {
    const seed = Number(process.env.SCAN_FUZZ_SEED ?? 20261126);
    const rnd = random(seed + 1);
    let accepted = 0;
    const runs = 3000;
    for (let i = 0; i < runs; i++) {
      let body = Buffer.from(generated(request, 0, rnd));
      if (rnd.below(10) === 0) body = body.subarray(0, rnd.below(body.length + 1));
      if (expectTwins(body, `seed ${seed}, generated ${i}: ${body.toString("base64")}`)) accepted++;
    }
    expect(accepted).toBeGreaterThan(runs / 20);
    expect(accepted).toBeLessThan(runs - runs / 20);
  });

  test("hand-made edge cases", () => {
    const span = protoSpan({ status: { code: 2 } });
    const one = encodeRequest("traces", { resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] });
    const cases: [string, Uint8Array][] = [
      // The same span message twice over: the second occurrence of each field wins, status merges.
      ["fields repeated", wrapSpan(Buffer.concat([spanBytes(span), spanBytes(protoSpan({ kind: 3 }))]))],
      // trace_id (1) as a varint, start (7) as fixed32: unknown fields, skipped, the span keeps none.
      ["wrong wire types", wrapSpan(Buffer.from([0x08, 0x01, 0x3d, 1, 2, 3, 4]))],
      [
        "zero and empty values clear",
        wrapSpan(Buffer.concat([spanBytes(span), Buffer.from([0x0a, 0, 0x30, 0])])),
      ],
      ["field number 0", Buffer.concat([one, Buffer.from([0x00, 0x01])])],
      ["wire type 6", Buffer.concat([one, Buffer.from([0x0e])])],
      ["unknown group, closed", Buffer.concat([one, Buffer.from([0x1b, 0x08, 0x01, 0x1c])])],
      ["unknown group, wrong end", Buffer.concat([one, Buffer.from([0x1b, 0x24])])],
      ["invalid UTF-8 in a name", wrapSpan(Buffer.from([0x2a, 0x02, 0xc3, 0x28]))],
      ["UTF-16 surrogate as UTF-8", wrapSpan(Buffer.from([0x2a, 0x03, 0xed, 0xa0, 0x80]))],
      ["overlong UTF-8", wrapSpan(Buffer.from([0x2a, 0x02, 0xc0, 0xaf]))],
      ["varint past ten bytes", wrapSpan(Buffer.from([0x50, ...Array(11).fill(0xff), 0x01]))],
      ["int64 value of ten bytes", intAttribute(9)],
      ["int64 value past ten bytes", intAttribute(10)],
      ["length past the end", wrapSpan(Buffer.from([0x0a, 0x7f, 0x01]))],
      // The request is depth 0, the attribute's value 5, each array level adds 2; the limit is 100.
      ["nested at the recursion limit", deepValue(47)],
      ["nested past the recursion limit", deepValue(48)],
      ["resource given twice (merged)", encodeTwice()],
    ];
    const verdicts = cases.map(
      ([label, body]) => `${label}: ${expectTwins(body, label) ? "accepted" : "refused"}`,
    );
    // The cases cover both verdicts: a test where all agree on one side would prove little.
    expect(verdicts).toContain("wrong wire types: accepted");
    expect(verdicts).toContain("invalid UTF-8 in a name: refused");
    expect(verdicts).toContain("nested at the recursion limit: accepted");
    expect(verdicts).toContain("nested past the recursion limit: refused");
    expect(verdicts).toContain("int64 value of ten bytes: accepted");
    expect(verdicts).toContain("int64 value past ten bytes: refused");
  });
});

const spanBytes = (span: Record<string, unknown>) =>
  Buffer.from(spanType.encode(spanType.fromObject(span)).finish());

/** `span` (raw Span message bytes) as the only span of a request. */
const wrapSpan = (span: Uint8Array): Uint8Array => delimited(1, delimited(2, delimited(2, span)));

/** A length-delimited field of `bytes`, framed by protobufjs's writer. */
const delimited = (field: number, bytes: Uint8Array): Buffer =>
  Buffer.from(
    protobuf.Writer.create()
      .uint32((field << 3) | 2)
      .bytes(bytes)
      .finish(),
  );

const varint = (value: number): Buffer => Buffer.from(protobuf.Writer.create().uint32(value).finish());

/** A span attribute whose int64 value is a varint of `continuations` + 1 bytes. */
function intAttribute(continuations: number): Uint8Array {
  const value = Buffer.from([0x18, ...Array(continuations).fill(0x80), 0x01]);
  const keyValue = Buffer.concat([Buffer.from([0x0a, 0x01, 0x69]), delimited(2, value)]);
  return wrapSpan(Buffer.concat([spanBytes(protoSpan()), delimited(9, keyValue)]));
}

/** A span attribute whose value nests `levels` array values deep. */
function deepValue(levels: number): Uint8Array {
  let value: Record<string, unknown> = { stringValue: "bottom" };
  for (let i = 0; i < levels; i++) value = { arrayValue: { values: [value] } };
  return wrapSpan(spanBytes(protoSpan({ attributes: [{ key: "deep", value }] })));
}

function encodeTwice(): Uint8Array {
  const resource = (name: string) => ({
    attributes: [{ key: "service.name", value: { stringValue: name } }],
  });
  const first = encodeRequest("traces", { resourceSpans: [{ resource: resource("a") }] });
  const second = encodeRequest("traces", {
    resourceSpans: [{ resource: resource("b"), scopeSpans: [{ spans: [protoSpan()] }] }],
  });
  // Two ResourceSpans fields' contents in one: resource (1) occurs twice, then scope spans.
  const inner = (body: Uint8Array) => {
    const reader = protobuf.Reader.create(body);
    reader.uint32();
    const length = reader.uint32();
    return Buffer.from(body).subarray(reader.pos, reader.pos + length);
  };
  return delimited(1, Buffer.concat([inner(first), inner(second)]));
}

type Random = ReturnType<typeof random>;

/** Strings that are valid UTF-8 (ASCII, 2- and 4-byte, a BOM) and not (lone byte, surrogate, > U+10FFFF). */
const TEXTS = [
  [],
  [0x41],
  [0xc3, 0xa9],
  [0xf0, 0x9f, 0x98, 0x80],
  [0xef, 0xbb, 0xbf],
  [0xff],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
];

/** A varint, sometimes padded with redundant continuation bytes (legal up to ten bytes). */
function encodedVarint(value: number, rnd: Random): number[] {
  const bytes = [...varint(value)];
  if (rnd.below(10) === 0) {
    const last = bytes.pop() as number;
    bytes.push(last | 0x80, ...Array(rnd.below(3)).fill(0x80), 0);
  }
  return bytes;
}

/** A varint value of any shape: small, 32-bit, ten bytes, too long, truncated by the body's end. */
function anyVarint(rnd: Random): number[] {
  switch (rnd.below(5)) {
    case 0:
      return [0xff, 0xff, 0xff, 0xff, 0x0f];
    case 1:
      return [...Array(9).fill(0xff), 0x01];
    case 2:
      // Ten bytes is the most a varint may take: nine to eleven continuation bytes straddle it.
      return [...Array(9 + rnd.below(3)).fill(0x80), rnd.below(2)];
    default:
      return [...varint(rnd.below(300))];
  }
}

const WIRE_TYPE: Record<string, number> = {
  double: 1,
  fixed64: 1,
  sfixed64: 1,
  float: 5,
  fixed32: 5,
  sfixed32: 5,
};

/**
 * A random message of `type` from its reflection: known fields with the right wire type mostly,
 * the wrong one sometimes; unknown fields of every wire type (groups too, some unclosed or closed
 * by the wrong field); texts valid and not; lengths now and then off by one; nesting up to past
 * the recursion limit.
 */
function generated(type: protobuf.Type, depth: number, rnd: Random): number[] {
  const out: number[] = [];
  const fields = type.fieldsArray;
  const count = depth > 40 ? rnd.below(2) : rnd.below(5);
  for (let i = 0; i < count; i++) {
    if (rnd.below(15) === 0) {
      out.push(...unknownField(rnd, depth));
      continue;
    }
    const field = fields[rnd.below(fields.length)] as protobuf.Field;
    const nested = field.resolve().resolvedType;
    const expected =
      nested instanceof protobuf.Type || field.type === "string" || field.type === "bytes"
        ? 2
        : (WIRE_TYPE[field.type] ?? 0);
    const wireType = rnd.below(15) === 0 ? ([0, 1, 2, 5][rnd.below(4)] ?? 0) : expected;
    out.push(...encodedVarint(field.id * 8 + wireType, rnd));
    if (wireType === 0) out.push(...anyVarint(rnd));
    else if (wireType === 1) out.push(...Array.from({ length: 8 }, () => rnd.below(256)));
    else if (wireType === 5) out.push(...Array.from({ length: 4 }, () => rnd.below(256)));
    else {
      const value =
        nested instanceof protobuf.Type
          ? generated(nested, depth + 1, rnd)
          : field.type === "bytes"
            ? Array.from({ length: [0, 3, 8, 16][rnd.below(4)] as number }, () =>
                rnd.below(3) ? rnd.below(256) : 0,
              )
            : (TEXTS[rnd.below(TEXTS.length)] as number[]);
      const skew = rnd.below(40) === 0 ? rnd.below(3) - 1 : 0;
      out.push(...encodedVarint(Math.max(0, value.length + skew), rnd), ...value);
    }
  }
  return out;
}

/** An unknown field: numbers 0 and beyond the schema's, any wire type, groups nested and mismatched. */
function unknownField(rnd: Random, depth: number): number[] {
  const id = rnd.below(4) === 0 ? 0 : 17 + rnd.below(40);
  const wireType = rnd.below(8);
  if (wireType !== 3) return [...encodedVarint(id * 8 + wireType, rnd), ...anyVarint(rnd)];
  const inner = depth < 110 && rnd.below(3) === 0 ? unknownField(rnd, depth + 1) : [];
  const closing = rnd.below(8) === 0 ? id + 1 : id;
  return [...encodedVarint(id * 8 + 3, rnd), ...inner, ...encodedVarint(closing * 8 + 4, rnd)];
}
