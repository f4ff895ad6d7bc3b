import { randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import protobuf from "protobufjs";
import { describe, expect, test } from "../../../test/fixtures.ts";
import {
  createKey,
  decodeStatus,
  JSON_TYPE,
  jsonSpan,
  jsonTraces,
  PROTO_TYPE,
  post,
  protoSpan,
  protoTraces,
  spansOf,
} from "../../../test/lib/telemetry.ts";
import { otlpMessages } from "./otlp-schema.ts";

/**
 * A request whose one span has an attribute nested `depth` arrays deep, written field by field:
 * protobufjs's own encoder refuses such depth, as its decoder must.
 */
function deeplyNestedTraces(depth: number): Uint8Array<ArrayBuffer> {
  const field = (number: number, bytes: Uint8Array) =>
    protobuf.Writer.create()
      .uint32((number << 3) | 2)
      .bytes(bytes)
      .finish();
  let value = protobuf.Writer.create()
    .uint32((1 << 3) | 2)
    .string("bottom")
    .finish(); // AnyValue.string_value
  for (let i = 0; i < depth; i++) value = field(5, field(1, value)); // AnyValue.array_value → ArrayValue.values
  const keyValue = Buffer.concat([
    protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .string("deep")
      .finish(),
    field(2, value),
  ]);
  const spanType = otlpMessages.traces.request.lookupType("opentelemetry.proto.trace.v1.Span");
  const span = Buffer.concat([
    spanType.encode(spanType.fromObject(protoSpan())).finish(),
    field(9, keyValue),
  ]);
  return new Uint8Array(field(1, field(2, field(2, span)))); // request.resource_spans → scope_spans → spans
}

describe("OTLP ingest refuses bad input the OTLP way and stores nothing", () => {
  test("truncated protobuf → 400 with a protobuf Status", async ({ app, owner, deps }) => {
    const { key } = await createKey(owner);
    const whole = protoTraces([protoSpan(), protoSpan()]);
    const res = await post(app, "/v1/traces", key, whole.subarray(0, whole.length - 7), PROTO_TYPE);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/x-protobuf");
    const status = decodeStatus(await res.arrayBuffer());
    expect(status.code).toBe(3);
    expect(status.message).toMatch(/not a valid OTLP protobuf/);
    expect(await spansOf(deps.db, owner.environmentId)).toBe(0);
  });

  test("invalid JSON and JSON of the wrong shape → 400 with a JSON Status", async ({ app, owner, deps }) => {
    const { key } = await createKey(owner);
    const bodies = [
      '{"resourceSpans": [',
      '{"resourceSpans": "nope"}',
      JSON.stringify(jsonTraces([jsonSpan({ kind: true })])),
      JSON.stringify(jsonTraces([jsonSpan({ startTimeUnixNano: "soon" })])),
      "",
    ];
    for (const body of bodies) {
      const res = await post(app, "/v1/traces", key, body, JSON_TYPE);
      expect(res.status, body).toBe(400);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(await res.json()).toMatchObject({ code: 3, message: expect.stringMatching(/OTLP\/JSON/) });
    }
    expect(await spansOf(deps.db, owner.environmentId)).toBe(0);
  });

  test("a deeply nested attribute value is a 400, not a crash", async ({ app, owner }) => {
    const { key } = await createKey(owner);
    let value: Record<string, unknown> = { stringValue: "bottom" };
    for (let i = 0; i < 300; i++) value = { arrayValue: { values: [value] } };
    const protobuf = await post(app, "/v1/traces", key, deeplyNestedTraces(300), PROTO_TYPE);
    expect(protobuf.status).toBe(400);
    expect(decodeStatus(await protobuf.arrayBuffer()).message).toMatch(/depth/);
    const json = await post(
      app,
      "/v1/traces",
      key,
      JSON.stringify(jsonTraces([jsonSpan({ attributes: [{ key: "deep", value }] })])),
      JSON_TYPE,
    );
    expect(json.status).toBe(400);
  });

  test("other content types → 415; other encodings → 415", async ({ app, owner }) => {
    const { key } = await createKey(owner);
    for (const type of ["text/plain", "application/xml", "multipart/form-data"]) {
      const res = await post(app, "/v1/traces", key, "hello", { "content-type": type });
      expect(res.status).toBe(415);
      expect(await res.json()).toMatchObject({ code: 3, message: expect.stringMatching(/x-protobuf/) });
    }
    const res = await post(app, "/v1/traces", key, "{}", { ...JSON_TYPE, "content-encoding": "br" });
    expect(res.status).toBe(415);
  });

  test("missing, unknown, secret (sk_) or malformed keys → 401", async ({ app, owner }) => {
    const body = JSON.stringify(jsonTraces([jsonSpan()]));
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Bearer pk_0000000000000000000000000000000000000000" },
      { authorization: `Bearer ${owner.apiKey}` },
      { "x-patchbay-key": "pk_" },
      { authorization: "Basic cGs6cGs=" },
    ];
    for (const headers of attempts) {
      const res = await post(app, "/v1/traces", undefined, body, { ...JSON_TYPE, ...headers });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
      expect(await res.json()).toMatchObject({ code: 16 });
    }
  });

  test("a gzip bomb is refused with 413 quickly, without inflating it", async ({ app, owner, deps }) => {
    const { key } = await createKey(owner);
    // 1 GiB of zeros as 1,024 concatenated gzip members of 1 MiB each (~1 MiB on the wire).
    const member = gzipSync(Buffer.alloc(1024 * 1024));
    const bomb = Buffer.concat(Array.from({ length: 1024 }, () => member));
    expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
    const before = process.memoryUsage();
    const started = performance.now();
    const res = await post(app, "/v1/traces", key, bomb, { ...PROTO_TYPE, "content-encoding": "gzip" });
    const elapsed = performance.now() - started;
    const after = process.memoryUsage();
    expect(res.status).toBe(413);
    expect(decodeStatus(await res.arrayBuffer()).message).toMatch(/decompressed body exceeds 8388608 bytes/);
    expect(elapsed).toBeLessThan(3_000);
    expect(after.rss - before.rss).toBeLessThan(256 * 1024 * 1024);
    expect(await spansOf(deps.db, owner.environmentId)).toBe(0);
  });

  test("oversized bodies → 413 (declared, streamed and compressed)", async ({ app, owner }) => {
    const { key } = await createKey(owner);
    const big = randomBytes(8 * 1024 * 1024 + 1);
    expect((await post(app, "/v1/traces", key, big, PROTO_TYPE)).status).toBe(413);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 9; i++) controller.enqueue(randomBytes(1024 * 1024));
        controller.close();
      },
    });
    const streamed = await app.request("/v1/traces", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, ...PROTO_TYPE },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(streamed.status).toBe(413);
    const compressed = gzipSync(randomBytes(5 * 1024 * 1024), { level: 0 });
    const res = await post(app, "/v1/traces", key, compressed, { ...PROTO_TYPE, "content-encoding": "gzip" });
    expect(res.status).toBe(413);
    expect(decodeStatus(await res.arrayBuffer()).message).toMatch(/compressed body exceeds 4194304/);
  });

  test("a body that is not gzip but says so → 400", async ({ app, owner }) => {
    const { key } = await createKey(owner);
    const res = await post(app, "/v1/traces", key, "{}", { ...JSON_TYPE, "content-encoding": "gzip" });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ message: "The body is not valid gzip data." });
  });

  test("GET and other methods → 405 with Allow: POST", async ({ app }) => {
    const res = await app.request("/v1/logs", { method: "GET" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });

  test("browsers may send with a publishable key: CORS preflight is answered for any origin", async ({
    app,
  }) => {
    const res = await app.request("/v1/traces", {
      method: "OPTIONS",
      headers: {
        origin: "https://shop.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,x-patchbay-key",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-headers")).toContain("x-patchbay-key");
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
  });
});
