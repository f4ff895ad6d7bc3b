import { describe, expect, test } from "vitest";
import type { LogRecordRow, SpanRecord } from "../telemetry-records.ts";
import { exceptionsFromLogs, exceptionsFromSpans } from "./exception-occurrences.ts";
import { identifyProblem } from "./fingerprint.ts";
import { maskMessage } from "./mask-message.ts";
import { parseStack } from "./stack-frames.ts";

class CardDeclined extends Error {
  override name = "CardDeclined";
}

function charge(orderId: number): never {
  throw new CardDeclined(`card declined for order ${orderId}`);
}
function refund(orderId: number): never {
  throw new CardDeclined(`card declined for order ${orderId}`);
}

const caught = (fn: () => never): Error => {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
};

const identify = (error: Error, service = "checkout") =>
  identifyProblem({ service, type: error.name, message: error.message, stacktrace: error.stack });

describe("problem fingerprints", () => {
  test("the same error from the same code is one problem, whatever the ids in its message", () => {
    const seen = [41, 42, 9_000].map((id) => identify(caught(() => charge(id))));
    expect(new Set(seen.map((p) => p.fingerprint)).size).toBe(1);
    expect(seen[0]?.title).toBe("CardDeclined: card declined for order <n>");
    expect(seen[0]?.culprit).toMatch(/^charge \(problems\/fingerprint\.test\.ts\)$/);
  });

  test("another call site, exception type or service is another problem", () => {
    const base = identify(caught(() => charge(1)));
    expect(identify(caught(() => refund(1))).fingerprint).not.toBe(base.fingerprint);
    const typeError = caught(() => charge(1));
    typeError.name = "TypeError";
    expect(identify(typeError).fingerprint).not.toBe(base.fingerprint);
    expect(
      identify(
        caught(() => charge(1)),
        "billing",
      ).fingerprint,
    ).not.toBe(base.fingerprint);
  });

  test("dependency and runtime frames are skipped; line numbers and deploy paths do not matter", () => {
    const stack = (dir: string, line: number) =>
      [
        "Error: connect ECONNREFUSED 10.0.0.7:5432",
        `    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1611:16)`,
        `    at Client.query (${dir}/node_modules/pg/lib/client.js:526:17)`,
        `    at async loadCart (${dir}/src/cart/load-cart.ts:${line}:5)`,
        `    at async Promise.all (index 0)`,
        `    at async handler (file://${dir}/src/routes/cart.ts:${line + 3}:10)`,
      ].join("\n");
    const a = identifyProblem({
      service: "cart",
      type: "Error",
      message: "connect ECONNREFUSED",
      stacktrace: stack("/app", 10),
    });
    const b = identifyProblem({
      service: "cart",
      type: "Error",
      message: "connect ECONNREFUSED",
      stacktrace: stack("/srv/release-7", 14),
    });
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(a.culprit).toBe("loadCart (cart/load-cart.ts)");
    expect(
      parseStack(stack("/app", 1))
        .filter((f) => f.inApp)
        .map((f) => f.function),
    ).toEqual(["loadCart", "handler"]);
  });

  test("Python (oldest call first) and JVM stacks find the top in-app frame", () => {
    const python = [
      "Traceback (most recent call last):",
      '  File "/app/shop/views.py", line 12, in checkout',
      "    charge(order)",
      '  File "/app/shop/payments.py", line 40, in charge',
      "    stripe.Charge.create()",
      '  File "/usr/lib/python3.12/site-packages/stripe/api.py", line 99, in create',
      "ValueError: bad card",
    ].join("\n");
    expect(
      identifyProblem({ service: "shop", type: "ValueError", message: "bad card", stacktrace: python })
        .culprit,
    ).toBe("charge (shop/payments.py)");
    const jvm = [
      "java.lang.IllegalStateException: cart 77 is closed",
      "\tat java.base/java.util.Objects.requireNonNull(Objects.java:233)",
      "\tat com.example.shop.Cart.add(Cart.java:42)",
      "\tat org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:897)",
    ].join("\n");
    const problem = identifyProblem({
      service: "shop",
      type: "java.lang.IllegalStateException",
      message: "cart 77 is closed",
      stacktrace: jvm,
    });
    expect(problem.culprit).toBe("com.example.shop.Cart.add (Cart.java)");
    expect(problem.title).toBe("java.lang.IllegalStateException: cart <n> is closed");
  });

  test("without a stack the masked message decides", () => {
    const one = identifyProblem({
      service: "api",
      type: "ERROR log",
      message: "payment 4242 failed for usr_2a4c6e8g0j2l4n6q",
    });
    const two = identifyProblem({
      service: "api",
      type: "ERROR log",
      message: "payment 17 failed for usr_9z8y7x6w5v4u3t2s",
    });
    const other = identifyProblem({
      service: "api",
      type: "ERROR log",
      message: "refund 17 failed for usr_9z8y7x6w5v4u3t2s",
    });
    expect(one.fingerprint).toBe(two.fingerprint);
    expect(other.fingerprint).not.toBe(one.fingerprint);
    expect(one.culprit).toBe("api");
  });

  test("a message the first masks grouped differently keeps that fingerprint as its legacy one", () => {
    const identify = (message: string) => identifyProblem({ service: "api", type: "ERROR log", message });
    // The first masks left short ids alone: each customer was a problem of its own.
    const short = identify("payment declined for customer usr_4rppz2");
    expect(short.legacyFingerprint).toMatch(/^sha256:/);
    expect(short.legacyFingerprint).not.toBe(short.fingerprint);
    expect(identify("payment declined for customer usr_c4r1nt").legacyFingerprint).not.toBe(
      short.legacyFingerprint,
    );
    // Masked alike by both: nothing to carry over.
    expect(identify("order 41 failed").legacyFingerprint).toBeUndefined();
    expect(identify("payment 4242 failed for usr_2a4c6e8g0j2l4n6q").legacyFingerprint).toBeUndefined();
    // Stack-grouped problems do not depend on the masks.
    expect(
      identifyProblem({
        service: "api",
        type: "CardDeclined",
        message: "card declined for order usr_1",
        stacktrace: caught(() => charge(1)).stack,
      }).legacyFingerprint,
    ).toBeUndefined();
  });

  test("masking covers numbers, uuids, prefixed ids and hex, and keeps the words", () => {
    expect(
      maskMessage(
        "user 0b6f2c1e-8d4a-4f3b-9c2d-1e0f9a8b7c6d (key_3j5k7m9p1r3t) at 0xdeadbeef saw 3.5 errors in deadbeef12 v2\nsecond line",
      ),
    ).toBe("user <uuid> (<id>) at <hex> saw <n> errors in <hex> v2");
  });
});

describe("exception occurrences", () => {
  const span: SpanRecord = {
    traceId: "a".repeat(32),
    spanId: "b".repeat(16),
    parentSpanId: null,
    serviceName: "checkout",
    name: "charge",
    kind: 1,
    startMicros: Date.parse("2026-11-22T10:00:00Z") * 1000,
    endMicros: Date.parse("2026-11-22T10:00:00Z") * 1000,
    durationNs: 0,
    statusCode: 2,
    statusMessage: null,
    scopeName: null,
    attributes: {},
    resourceAttributes: {},
    links: [],
    events: [
      {
        name: "exception",
        timeUnixNano: "1795000000000000000",
        attributes: {
          "exception.type": "TypeError",
          "exception.message": "x is undefined",
          "exception.stacktrace": "s",
        },
      },
      { name: "exception", timeUnixNano: "0", attributes: {} },
      { name: "retry", timeUnixNano: "0", attributes: { "exception.type": "Nope" } },
    ],
  };

  test("exception span events become occurrences with their trace", () => {
    expect(exceptionsFromSpans([span])).toEqual([
      {
        source: "span",
        service: "checkout",
        type: "TypeError",
        message: "x is undefined",
        stacktrace: "s",
        traceId: span.traceId,
        spanId: span.spanId,
        time: new Date(1_795_000_000_000).toISOString(),
      },
    ]);
  });

  test("error logs and logged exceptions become occurrences; other logs do not", () => {
    const log: LogRecordRow = {
      time: "2026-11-22T10:00:00.000000Z",
      severityNumber: 9,
      severityText: "INFO",
      body: "fine",
      serviceName: "api",
      traceId: null,
      spanId: null,
      eventName: null,
      scopeName: null,
      attributes: {},
      resourceAttributes: {},
    };
    const found = exceptionsFromLogs([
      log,
      { ...log, severityNumber: 17, body: "db down" },
      { ...log, severityNumber: 21, body: "out of memory" },
      { ...log, attributes: { "exception.type": "KeyError", "exception.message": "'sku'" } },
    ]);
    expect(found.map((o) => [o.source, o.type, o.message])).toEqual([
      ["log", "ERROR log", "db down"],
      ["log", "FATAL log", "out of memory"],
      ["log", "KeyError", "'sku'"],
    ]);
  });
});
