/**
 * Realistic OTLP trace export bodies for bench:ingest, shaped like what the OpenTelemetry Node SDK's
 * BatchSpanProcessor sends: one resource (SDK, host and process attributes), one instrumentation
 * scope, 512 spans per request in traces of eight spans (an HTTP server span, database and HTTP
 * client children, internal spans), HTTP semantic-convention attributes, and about 2 % of spans
 * carrying an `exception` event with a V8 stack trace (three distinct errors, with varying ids in
 * their messages).
 *
 * A body is encoded once as a template; `fresh()` copies it and overwrites every trace and span id
 * in place (their byte offsets are found once), so each request stores new spans without paying
 * for protobuf encoding per request.
 */
import { randomBytes } from "node:crypto";
import { otlpMessages } from "../../src/features/telemetry/otlp-schema.ts";

const SPANS_PER_TRACE = 8;

const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
const int = (key: string, value: number) => ({ key, value: { intValue: value } });

const errors = [
  {
    type: "TypeError",
    message: (n: number) => `Cannot read properties of undefined (reading 'sku') for order ${n}`,
    stack: (n: number) =>
      [
        `TypeError: Cannot read properties of undefined (reading 'sku') for order ${n}`,
        "    at priceLine (/app/src/cart/price-line.ts:41:23)",
        "    at Array.map (<anonymous>)",
        "    at priceCart (/app/src/cart/price-cart.ts:18:30)",
        "    at async checkout (/app/src/routes/checkout.ts:77:17)",
        "    at async dispatch (/app/node_modules/hono/dist/compose.js:22:23)",
      ].join("\n"),
  },
  {
    type: "Error",
    message: (n: number) => `connect ECONNREFUSED 10.0.${n % 255}.7:5432`,
    stack: (n: number) =>
      [
        `Error: connect ECONNREFUSED 10.0.${n % 255}.7:5432`,
        "    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1611:16)",
        "    at Client.query (/app/node_modules/pg/lib/client.js:526:17)",
        "    at async loadCart (/app/src/cart/load-cart.ts:10:5)",
      ].join("\n"),
  },
  {
    type: "PaymentDeclined",
    message: (n: number) => `card declined for payment pay_${n.toString(36).padStart(10, "0")}`,
    stack: (n: number) =>
      [
        `PaymentDeclined: card declined for payment pay_${n.toString(36).padStart(10, "0")}`,
        "    at charge (/app/src/payments/charge.ts:55:11)",
        "    at async checkout (/app/src/routes/checkout.ts:81:5)",
      ].join("\n"),
  },
];

function span(index: number, traceId: Buffer, spanIds: Buffer[], startNs: bigint, withError: boolean) {
  const position = index % SPANS_PER_TRACE;
  const root = position === 0;
  const start = startNs + BigInt(position) * 200_000n;
  const end = start + (root ? 12_000_000n : 1_500_000n + BigInt(index % 7) * 100_000n);
  const route = ["/checkout", "/cart/{id}", "/products", "/orders/{id}"][index % 4] ?? "/";
  const attributes = root
    ? [
        str("http.method", "POST"),
        str("http.target", route.replace("{id}", String(1000 + index))),
        str("http.route", route),
        str("http.scheme", "http"),
        str("http.host", "shop.internal:8080"),
        str("http.user_agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36"),
        int("http.status_code", withError ? 500 : 200),
        str("http.flavor", "1.1"),
        str("net.host.name", "shop.internal"),
        int("net.host.port", 8080),
        str("net.peer.ip", "10.0.3.17"),
        int("net.peer.port", 51234 + (index % 1000)),
      ]
    : position % 3 === 1
      ? [
          str("db.system", "postgresql"),
          str("db.name", "shop"),
          str("db.statement", "select * from cart_items where cart_id = $1"),
          str("net.peer.name", "db.internal"),
          int("net.peer.port", 5432),
        ]
      : position % 3 === 2
        ? [
            str("http.method", "GET"),
            str("http.url", `http://inventory.internal/items/${index}`),
            int("http.status_code", 200),
            str("net.peer.name", "inventory.internal"),
          ]
        : [str("code.function", "priceCart"), str("code.namespace", "cart")];
  const error = errors[index % errors.length];
  return {
    traceId,
    spanId: spanIds[position],
    parentSpanId: root ? undefined : spanIds[0],
    name: root ? `POST ${route}` : position % 3 === 1 ? "pg.query:SELECT shop" : `span ${position}`,
    kind: root ? 2 : position % 3 === 0 ? 1 : 3,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: end.toString(),
    attributes,
    events:
      withError && error
        ? [
            {
              name: "exception",
              timeUnixNano: (end - 1000n).toString(),
              attributes: [
                str("exception.type", error.type),
                str("exception.message", error.message(index)),
                str("exception.stacktrace", error.stack(index)),
              ],
            },
          ]
        : [],
    status: withError ? { code: 2, message: error?.message(index) } : { code: 0 },
  };
}

export type BatchTemplate = {
  spans: number;
  bytes: number;
  /** A copy of the body with new random trace and span ids. */
  fresh(): Uint8Array;
};

/** One export request of `spans` spans (a multiple of 8), `errorEvery`-th span failing. */
export function traceBatch(options: { spans?: number; errorEvery?: number; service?: string } = {}) {
  const spans = options.spans ?? 512;
  const errorEvery = options.errorEvery ?? 50;
  const nowNs = BigInt(Date.now()) * 1_000_000n - 60_000_000_000n;
  const ids: Buffer[] = [];
  const list = [];
  for (let t = 0; t < spans / SPANS_PER_TRACE; t++) {
    const traceId = randomBytes(16);
    const spanIds = Array.from({ length: SPANS_PER_TRACE }, () => randomBytes(8));
    ids.push(traceId, ...spanIds);
    for (let s = 0; s < SPANS_PER_TRACE; s++) {
      const index = t * SPANS_PER_TRACE + s;
      list.push(span(index, traceId, spanIds, nowNs + BigInt(t) * 1_000_000n, index % errorEvery === 7));
    }
  }
  const request = {
    resourceSpans: [
      {
        resource: {
          attributes: [
            str("service.name", options.service ?? "shop"),
            str("service.version", "1.42.0"),
            str("service.instance.id", "7f3c2a9e-4b1d-4e8f-a6c5-0d9e8f7a6b5c"),
            str("deployment.environment", "production"),
            str("telemetry.sdk.name", "opentelemetry"),
            str("telemetry.sdk.language", "nodejs"),
            str("telemetry.sdk.version", "2.12.1"),
            str("host.name", "shop-7d9f8c6b5-x2k4j"),
            str("host.arch", "amd64"),
            int("process.pid", 1),
            str("process.runtime.name", "nodejs"),
            str("process.runtime.version", "24.21.0"),
          ],
        },
        scopeSpans: [
          { scope: { name: "@opentelemetry/instrumentation-http", version: "0.223.0" }, spans: list },
        ],
      },
    ],
  };
  const type = otlpMessages.traces.request;
  const body = type.encode(type.fromObject(request)).finish();
  // Where each id sits in the encoded body (a trace id in each of its spans, a span id also as
  // its children's parent): every place of one template id gets the same new id.
  const buffer = Buffer.from(body);
  const places = ids.map((id) => {
    const at: number[] = [];
    for (let from = buffer.indexOf(id); from >= 0; from = buffer.indexOf(id, from + id.length)) at.push(from);
    return { size: id.length, at };
  });
  const idBytes = places.reduce((sum, p) => sum + p.size, 0);
  return {
    spans,
    bytes: body.byteLength,
    fresh() {
      const copy = Buffer.from(buffer);
      const random = randomBytes(idBytes);
      let offset = 0;
      for (const { size, at } of places) {
        for (const position of at) random.copy(copy, position, offset, offset + size);
        offset += size;
      }
      return copy;
    },
  } satisfies BatchTemplate;
}
