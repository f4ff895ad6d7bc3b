import { connect } from "node:net";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { listen, problem } from "../../../test/http.ts";
import { environments } from "../../platform/db/schema/environments.ts";

describe("request guards and error shape", () => {
  test("a body past 1 MiB is 413 payload_too_large", async ({ owner }) => {
    const res = await owner.api.post("/environments", { name: "x".repeat(1024 * 1024 + 10) });
    expect(res.status).toBe(413);
    expect((await problem(res)).code).toBe("payload_too_large");
  });

  test("a non-JSON body is 415 unsupported_media_type", async ({ owner }) => {
    const res = await owner.api.post("/environments", "name=x", {
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(415);
    expect((await problem(res)).code).toBe("unsupported_media_type");
  });

  test("a POST with no body at all, as `curl -X POST` sends it, reaches an operation that takes none", async ({
    app,
    owner,
  }) => {
    const server = await listen(app);
    try {
      const { port } = server;
      // Raw bytes: fetch and node:http both frame a bodiless POST (content-length: 0); curl does not.
      const post = (headers: Record<string, string>, body = "") =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const lines = [
            `POST /api/v1/environments/${owner.environmentId}/mcp-connections/mcp_nonexistent/discoveries HTTP/1.1`,
            `host: 127.0.0.1:${port}`,
            `authorization: Bearer ${owner.apiKey}`,
            `idempotency-key: ${crypto.randomUUID()}`,
            'if-match: "1"',
            "connection: close",
            ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
          ];
          // write, not end: a half-closed client may see its connection dropped before the answer
          // (`connection: close` makes the server close it after answering).
          const socket = connect(port, "127.0.0.1", () =>
            socket.write(`${lines.join("\r\n")}\r\n\r\n${body}`),
          );
          let answer = "";
          socket.on("data", (chunk) => {
            answer += chunk;
          });
          socket.on("error", reject);
          socket.on("close", () => {
            const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
            resolve({ status, body: answer.slice(answer.indexOf("\r\n\r\n") + 4) });
          });
        });
      const bare = await post({});
      expect(bare.status, bare.body).toBe(404); // the operation ran: no such connection
      expect(JSON.parse(bare.body).code).toBe("not_found");
      // A body that is declared but not JSON is still refused.
      const form = await post({ "content-type": "text/plain", "content-length": "4" }, "name");
      expect(form.status).toBe(415);
    } finally {
      await server.close();
    }
  });

  test("a body that is not UTF-8, or a string with a lone surrogate, is refused rather than stored changed", async ({
    app,
    owner,
    deps,
  }) => {
    const post = (body: string | Uint8Array<ArrayBuffer>) =>
      app.request("/api/v1/environments", {
        method: "POST",
        headers: {
          authorization: `Bearer ${owner.apiKey}`,
          "content-type": "application/json",
          "idempotency-key": crypto.randomUUID(),
        },
        body,
      });
    const before = await deps.db.select().from(environments);
    const sent: (string | Uint8Array<ArrayBuffer>)[] = [
      new Uint8Array([...Buffer.from('{"name":"caf'), 0xe9, ...Buffer.from('"}')]), // Latin-1 é
      new Uint8Array([...Buffer.from('{"name":"'), 0xed, 0xa0, 0x80, ...Buffer.from('"}')]), // an encoded surrogate
      '{"name":"half \\ud800"}',
      '{"name":"low \\udc00 first"}',
      '{"name":"swapped \\ude00\\ud83d"}',
    ];
    for (const body of sent) {
      const res = await post(body);
      expect(res.status, String(body)).toBe(400);
      expect((await problem(res)).code).toBe("invalid_request");
    }
    expect(await deps.db.select().from(environments)).toHaveLength(before.length);
    // A proper pair, escaped or not, and an escaped backslash before a "u" are fine.
    for (const name of ["smile \\ud83d\\ude00", "grin 😁", "path \\\\ud800"]) {
      const res = await post(`{"name":"${name}"}`);
      expect(res.status, name).toBe(201);
    }
    const names = (await deps.db.select().from(environments)).map((e) => e.name);
    expect(names).toEqual(expect.arrayContaining(["smile 😀", "grin 😁", "path \\ud800"]));
  });

  test("a known path asked with a method it does not serve is 405 with Allow; an unknown path stays 404", async ({
    owner,
  }) => {
    const env = `/environments/${owner.environmentId}`;
    const wrong = await owner.api.request("PUT", `${env}/tasks`, { body: {} });
    expect(wrong.status).toBe(405);
    expect((await problem(wrong)).code).toBe("method_not_allowed");
    expect(wrong.headers.get("allow")).toBe("GET, POST");
    const item = await owner.api.request("POST", `${env}/mcp-connections/mcp_x`, { body: {} });
    expect(item.status).toBe(405);
    expect(item.headers.get("allow")).toBe("DELETE, GET, PATCH");
    const unknown = await owner.api.request("PUT", `${env}/nothing-here`, { body: {} });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("allow")).toBeNull();
  });

  test("malformed JSON is 400 invalid_request", async ({ owner }) => {
    const res = await owner.api.post("/environments", "{not json");
    expect(res.status).toBe(400);
    expect((await problem(res)).code).toBe("invalid_request");
  });

  test("unknown routes are 404 problem documents, authenticated or not", async ({ app, owner }) => {
    for (const res of [
      await app.request("/nope"),
      await owner.api.get("/nope"),
      await app.request("/api/v1/nope"),
    ]) {
      expect([401, 404]).toContain(res.status);
      expect((await problem(res)).code).toMatch(/not_found|unauthorized/);
    }
    expect((await owner.api.get("/definitely/not/here")).status).toBe(404);
  });

  test("health and readiness", async ({ app }) => {
    expect((await app.request("/healthz")).status).toBe(200);
    const ready = await app.request("/readyz");
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: "ok" });
  });

  test("the API reference is served from local assets", async ({ app }) => {
    const page = await app.request("/api/v1/docs");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    for (const src of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
      const asset = await app.request(src[1] ?? "");
      expect(asset.status, src[1]).toBe(200);
    }
  });

  test("an unexpected fault is a 500 that reveals only the request id", async ({ deps, owner }) => {
    const { createApp } = await import("../../app.ts");
    const broken = createApp({
      ...deps,
      db: new Proxy(deps.db, {
        get: () => {
          throw new Error("secret internals: password=hunter2");
        },
      }),
    });
    const res = await broken.request("/api/v1/me", { headers: { authorization: `Bearer ${owner.apiKey}` } });
    expect(res.status).toBe(500);
    const body = await problem(res);
    expect(body.code).toBe("internal");
    expect(JSON.stringify(body)).not.toContain("hunter2");
    expect(body.requestId).toBe(res.headers.get("x-request-id"));
  });
});
