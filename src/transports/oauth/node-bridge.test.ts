import type { IncomingMessage } from "node:http";
import { describe, expect, test } from "vitest";
import { type MemoryResponse, runNodeHandler } from "./node-bridge.ts";

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

describe("the Node bridge (web Request → Node handler → web Response)", () => {
  test("the handler sees method, URL, headers and body; the Response has its status, headers and body", async () => {
    let seen: Record<string, unknown> = {};
    const answer = await runNodeHandler(
      async (req: IncomingMessage, res: MemoryResponse) => {
        seen = {
          method: req.method,
          url: req.url,
          originalUrl: (req as IncomingMessage & { originalUrl?: string }).originalUrl,
          type: req.headers["content-type"],
          length: req.headers["content-length"],
          body: await readAll(req),
        };
        res.statusCode = 201;
        res.setHeader("Set-Cookie", ["a=1; Path=/", "b=2; Path=/"]);
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ ok: true }));
      },
      {
        method: "POST",
        url: "/oauth/token?x=1",
        headers: new Headers({ "content-type": "application/x-www-form-urlencoded" }),
        body: new TextEncoder().encode("grant_type=refresh_token"),
        mountPath: "/prefix",
      },
    );
    expect(seen).toEqual({
      method: "POST",
      url: "/oauth/token?x=1",
      originalUrl: "/prefix/oauth/token?x=1",
      type: "application/x-www-form-urlencoded",
      length: "24",
      body: "grant_type=refresh_token",
    });
    expect(answer.status).toBe(201);
    expect(answer.headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/"]);
    expect(await answer.json()).toEqual({ ok: true });
  });

  test("a bodiless status gets no body; writes in pieces arrive whole", async () => {
    const empty = await runNodeHandler(
      (_req, res) => {
        res.statusCode = 204;
        res.end();
      },
      { method: "GET", url: "/", headers: new Headers() },
    );
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    const pieces = await runNodeHandler(
      (_req, res) => {
        res.write("one ");
        res.end("two");
      },
      { method: "GET", url: "/", headers: new Headers() },
    );
    expect(await pieces.text()).toBe("one two");
  });

  test("attachments reach the handler on the request", async () => {
    const key = Symbol("context");
    let found: unknown;
    await runNodeHandler(
      (req, res) => {
        found = (req as unknown as Record<symbol, unknown>)[key];
        res.end();
      },
      { method: "GET", url: "/", headers: new Headers(), attachments: new Map([[key, "the context"]]) },
    );
    expect(found).toBe("the context");
  });
});
