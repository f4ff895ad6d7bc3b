import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { listen } from "../../../test/http.ts";
import { exchangeUntilClosed, heldBody, streamed } from "../../../test/lib/held-request.ts";
import { createKey } from "../../../test/lib/telemetry.ts";
import { drainable } from "./drain.ts";

/** A request head (and the start of a body, if any) as raw HTTP/1.1. */
const head = (lines: string[], body = "") => `${lines.join("\r\n")}\r\n\r\n${body}`;

describe("answers that end the connection say so, then end it", () => {
  test("REST: a declared body past 1 MiB is 413 with Connection: close, and the connection is closed without reading it", async ({
    app,
    owner,
  }) => {
    const server = await listen(app);
    try {
      const answer = await exchangeUntilClosed(
        server.port,
        head(
          [
            "POST /api/v1/environments HTTP/1.1",
            `host: 127.0.0.1:${server.port}`,
            `authorization: Bearer ${owner.apiKey}`,
            "content-type: application/json",
            `idempotency-key: ${crypto.randomUUID()}`,
            `content-length: ${2 * 1024 * 1024}`,
          ],
          '{"name":"',
        ),
      );
      expect(answer.status).toBe(413);
      expect(answer.headers.connection).toBe("close");
      expect(JSON.parse(answer.body)).toMatchObject({ code: "payload_too_large" });
      expect(answer.closed).toBe("end");
    } finally {
      await server.close();
    }
  });

  test("OTLP: a declared body past the limit is 413 with Connection: close, then closed", async ({
    app,
    owner,
  }) => {
    const { key } = await createKey(owner);
    const server = await listen(app);
    try {
      const answer = await exchangeUntilClosed(
        server.port,
        head([
          "POST /v1/traces HTTP/1.1",
          `host: 127.0.0.1:${server.port}`,
          `authorization: Bearer ${key}`,
          "content-type: application/json",
          `content-length: ${64 * 1024 * 1024}`,
        ]),
      );
      expect(answer.status).toBe(413);
      expect(answer.headers.connection).toBe("close");
      expect(answer.headers["content-type"]).toMatch(/^application\/json/); // an OTLP Status
      expect(answer.closed).toBe("end");
    } finally {
      await server.close();
    }
  });

  test("OTLP: the write queue full is 503 with Retry-After and Connection: close before the body is read", async ({
    app,
    owner,
  }) => {
    const { key } = await createKey(owner);
    const server = await listen(app);
    // Fill the write queue (32 requests admitted at once) with exports whose bodies are held back.
    const held = Array.from({ length: 32 }, () => heldBody(JSON.stringify({ resourceSpans: [] })));
    const pending = held.map((h) =>
      app.request(
        "/v1/traces",
        streamed({
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: h.body,
        }),
      ),
    );
    try {
      await Promise.all(held.map((h) => h.reading));
      const answer = await exchangeUntilClosed(
        server.port,
        head([
          "POST /v1/traces HTTP/1.1",
          `host: 127.0.0.1:${server.port}`,
          `authorization: Bearer ${key}`,
          "content-type: application/json",
          "content-length: 5000",
        ]),
      );
      expect(answer.status).toBe(503);
      expect(answer.headers["retry-after"]).toBe("1");
      expect(answer.headers.connection).toBe("close");
      expect(answer.closed).toBe("end");
    } finally {
      for (const h of held) h.release();
      const statuses = await Promise.all(pending.map(async (p) => (await p).status));
      await server.close();
      expect(statuses.every((s) => s === 200)).toBe(true);
    }
  });

  test("shutdown: a request in flight when the drain starts is answered with Connection: close, then its connection closes", async () => {
    const app = new Hono();
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let arrived = () => {};
    const inFlight = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    app.get("/slow", async (c) => {
      arrived();
      await released;
      return c.json({ ok: true });
    });
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s as Server));
    });
    const drain = drainable(server);
    const { port } = server.address() as AddressInfo;
    const exchange = exchangeUntilClosed(port, head(["GET /slow HTTP/1.1", `host: 127.0.0.1:${port}`]));
    await inFlight;
    const drained = drain({ settleMs: 50, timeoutMs: 10_000 });
    release();
    const answer = await exchange;
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).toBe("close");
    expect(answer.closed).toBe("end");
    await drained;
  });
});
