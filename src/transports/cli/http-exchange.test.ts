import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exchange } from "./http-exchange.ts";

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/redirect") {
      res.writeHead(302, { location: "https://elsewhere.example/steal" }).end();
    } else if (req.url === "/silent") {
      // Never answers: the client's timeout must end the wait.
    } else {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const echoed = {
          method: req.method,
          authorization: req.headers.authorization,
          length: req.headers["content-length"],
          body: Buffer.concat(chunks).toString("utf8"),
        };
        res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify(echoed));
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("exchange", () => {
  it("sends the method, headers and a UTF-8 body with its length, and reads the answer whole", async () => {
    const body = JSON.stringify({ name: "café ☕" });
    const res = await exchange(new URL(`${base}/echo`), {
      method: "POST",
      headers: { authorization: "Bearer sk_test" },
      body,
      timeoutMs: 5_000,
    });
    expect(res.status).toBe(201);
    expect(JSON.parse(res.text)).toEqual({
      method: "POST",
      authorization: "Bearer sk_test",
      length: String(Buffer.byteLength(body)),
      body,
    });
  });

  it("does not follow a redirect: the credential stays here", async () => {
    const res = await exchange(new URL(`${base}/redirect`), { method: "GET", headers: {}, timeoutMs: 5_000 });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe("https://elsewhere.example/steal");
  });

  it("gives up after its timeout with a TimeoutError, as fetch's signal would", async () => {
    const error = await exchange(new URL(`${base}/silent`), {
      method: "GET",
      headers: {},
      timeoutMs: 200,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe("TimeoutError");
  });

  it("a refused connection rejects with the socket's error as its cause", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = (await exchange(new URL(`http://127.0.0.1:${port}/`), {
      method: "GET",
      headers: {},
      timeoutMs: 5_000,
    }).catch((e: unknown) => e)) as Error;
    expect((error.cause as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
  });

  it("does not load fetch's engine (undici), which would cost a command ~30 ms", async () => {
    // A process of its own: the test runner has loaded undici long since.
    const script = `
      const { exchange } = await import(${JSON.stringify(new URL("./http-exchange.ts", import.meta.url).href)});
      const res = await exchange(new URL(${JSON.stringify(`${base}/echo`)}), { method: "GET", headers: {}, timeoutMs: 5000 });
      console.log(JSON.stringify({ status: res.status, undici: process.moduleLoadList.filter((m) => m.includes("undici")) }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script]);
    expect(JSON.parse(stdout)).toEqual({ status: 201, undici: [] });
  });
});
