import { brotliCompressSync, gzipSync } from "node:zlib";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import {
  devPolicy,
  makeTestCa,
  refusedOrigin,
  startHttpsServer,
  startSilentTcpServer,
  type TestCa,
  type TestServer,
} from "../../../test/lib/egress-servers.ts";
import { AppError } from "../../errors.ts";
import { strictEgressPolicy } from "./address-policy.ts";
import { createEgress, type Resolve } from "./egress-fetch.ts";

let ca: TestCa;
let server: TestServer;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  ca = await makeTestCa();
  server = await startHttpsServer(ca, (req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ ok: true, path: req.url }));
  });
});
afterAll(() => server.close());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function egressFor(...args: Parameters<typeof createEgress>) {
  const egress = createEgress(...args);
  cleanups.push(() => egress.close());
  return egress;
}

async function startServer(...args: Parameters<typeof startHttpsServer>) {
  const started = await startHttpsServer(...args);
  cleanups.push(() => started.close());
  return started;
}

/** Resolves every name in `names` to the given addresses; anything else does not exist. */
const resolverFor =
  (names: Record<string, string[]>): Resolve =>
  async (hostname) => {
    const addresses = names[hostname];
    if (!addresses)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };

const caught = async (promise: Promise<unknown>): Promise<AppError> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected a rejection");
};

describe("dev override (loopback server)", () => {
  test("a POST with headers and body reaches the server and the answer comes back", async () => {
    const before = server.received.length;
    const egress = egressFor(devPolicy(ca, [server.port]));
    const res = await egress.fetch(`${server.origin}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer t0k" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, path: "/mcp" });
    expect(res.url).toBe(`${server.origin}/mcp`);
    const seen = server.received.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      method: "POST",
      path: "/mcp",
      headers: { authorization: "Bearer t0k" },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
  });

  test("a Request object and a URL object are accepted like fetch accepts them", async () => {
    const egress = egressFor(devPolicy(ca, [server.port]));
    const request = new Request(`${server.origin}/a/b`, { method: "PUT", body: "x" });
    expect(await (await egress.fetch(request)).json()).toEqual({ ok: true, path: "/a/b" });
    expect(await (await egress.fetch(new URL(`${server.origin}/c`))).json()).toEqual({
      ok: true,
      path: "/c",
    });
  });

  test("empty answers (202 to a notification, 204) come back as such", async () => {
    const empty = await startServer(ca, (req, res) => {
      res.statusCode = req.url === "/accepted" ? 202 : 204;
      res.end();
    });
    const egress = egressFor(devPolicy(ca, [empty.port]));
    const accepted = await egress.fetch(`${empty.origin}/accepted`, { method: "POST", body: "{}" });
    expect(accepted.status).toBe(202);
    expect(await accepted.text()).toBe("");
    const noContent = await egress.fetch(`${empty.origin}/none`, { method: "DELETE" });
    expect(noContent.status).toBe(204);
    expect(noContent.body).toBeNull();
  });

  test("the caller's abort signal is honoured and surfaces as the caller's AbortError", async () => {
    const stalled = await startServer(ca, () => {});
    const egress = egressFor(devPolicy(ca, [stalled.port]));
    const controller = new AbortController();
    const pending = egress.fetch(`${stalled.origin}/`, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });

  test("a name is resolved by the injected resolver and dialled at the checked address", async () => {
    const egress = egressFor(devPolicy(ca, [server.port]), {
      resolve: resolverFor({ "mcp.example.com": ["127.0.0.1"] }),
    });
    const res = await egress.fetch(`https://mcp.example.com:${server.port}/x`);
    expect(await res.json()).toEqual({ ok: true, path: "/x" });
  });

  test("without the extra CA the loopback certificate is not trusted", async () => {
    const egress = egressFor(devPolicy(ca, [server.port], { extraCa: undefined }));
    const error = await caught(egress.fetch(`${server.origin}/`));
    expect(error).toMatchObject({ code: "remote_unreachable", details: { reason: "tls" } });
  });

  test("proxy environment variables are ignored", async () => {
    const saved = { HTTPS_PROXY: process.env.HTTPS_PROXY, https_proxy: process.env.https_proxy };
    process.env.HTTPS_PROXY = "http://127.0.0.1:9";
    process.env.https_proxy = "http://127.0.0.1:9";
    try {
      const egress = egressFor(devPolicy(ca, [server.port]));
      expect((await egress.fetch(`${server.origin}/direct`)).status).toBe(200);
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });

  test("a name that stops resolving is remote_unreachable (dns)", async () => {
    const egress = egressFor(devPolicy(ca, [server.port]), { resolve: resolverFor({}) });
    const error = await caught(egress.fetch(`https://gone.example.com:${server.port}/`));
    expect(error).toMatchObject({ code: "remote_unreachable", details: { reason: "dns" } });
  });

  test("a closed port is remote_unreachable (refused)", async () => {
    const refused = await refusedOrigin();
    const egress = egressFor(devPolicy(ca, [refused.port]));
    const error = await caught(egress.fetch(`${refused.origin}/`)).finally(() => refused.close());
    expect(error).toMatchObject({ code: "remote_unreachable", details: { reason: "refused" } });
  });
});

describe("production policy", () => {
  test("refuses the same loopback server: its port first", async () => {
    const before = server.received.length;
    const egress = egressFor(strictEgressPolicy());
    const error = await caught(egress.fetch(`${server.origin}/mcp`));
    expect(error).toMatchObject({ code: "egress_blocked", details: { rule: "port" } });
    expect(server.received.length).toBe(before);
  });

  test("refuses the loopback address even when its port is allowed", async () => {
    const before = server.received.length;
    const egress = egressFor({ ...strictEgressPolicy(), allowPorts: [443, server.port], extraCa: ca.cert });
    const error = await caught(egress.fetch(`${server.origin}/mcp`));
    expect(error).toMatchObject({ code: "egress_blocked", details: { rule: "host_ip_not_global" } });
    const byName = createEgress(
      { ...strictEgressPolicy(), allowPorts: [443, server.port], extraCa: ca.cert },
      { resolve: resolverFor({ "mcp.example.com": ["127.0.0.1"] }) },
    );
    cleanups.push(() => byName.close());
    const named = await caught(byName.fetch(`https://mcp.example.com:${server.port}/mcp`));
    expect(named).toMatchObject({ code: "egress_blocked", details: { rule: "address_not_global" } });
    expect(server.received.length).toBe(before);
  });
});

describe("DNS rebinding", () => {
  test("every dial re-resolves and re-checks: a name that turns private is refused", async () => {
    const closing = await startServer(ca, (_req, res) => {
      res.setHeader("connection", "close");
      res.end("ok");
    });
    // Policy allows only 127.0.0.1, standing in for "public"; 127.0.0.2 stands in for private.
    const answers = [["127.0.0.1"], ["127.0.0.2"]];
    let calls = 0;
    const resolve: Resolve = async () => {
      const next = answers[Math.min(calls++, answers.length - 1)] ?? [];
      return next.map((address) => ({ address, family: 4 }));
    };
    const egress = egressFor(devPolicy(ca, [closing.port], { allowCidrs: ["127.0.0.1/32"] }), { resolve });
    const url = `https://rebind.example.com:${closing.port}/`;
    expect(await (await egress.fetch(url)).text()).toBe("ok");
    const error = await caught(egress.fetch(url));
    expect(error).toMatchObject({ code: "egress_blocked", details: { rule: "address_not_global" } });
    expect(calls).toBe(2);
    expect(closing.received).toHaveLength(1);
  });

  test("one disallowed address among several refuses the name", async () => {
    const before = server.received.length;
    const egress = egressFor(devPolicy(ca, [server.port], { allowCidrs: ["127.0.0.1/32"] }), {
      resolve: resolverFor({ "mixed.example.com": ["127.0.0.1", "10.0.0.7"] }),
    });
    const error = await caught(egress.fetch(`https://mixed.example.com:${server.port}/`));
    expect(error).toMatchObject({ code: "egress_blocked", details: { rule: "address_not_global" } });
    expect(server.received.length).toBe(before);
  });
});

describe("redirects are refused, never followed", () => {
  let target: TestServer;
  beforeAll(async () => {
    target = await startHttpsServer(ca, (_req, res) => res.end("target"));
  });
  afterAll(() => target.close());

  for (const status of [301, 302, 303, 307, 308]) {
    for (const kind of ["private", "public-looking"] as const) {
      test(`${status} to a ${kind} target`, async () => {
        const location =
          kind === "private" ? `${target.origin}/steal` : `https://public.example.com:${target.port}/steal`;
        const redirecting = await startServer(ca, (_req, res) => {
          res.statusCode = status;
          res.setHeader("location", location);
          res.end();
        });
        const resolved: string[] = [];
        const egress = egressFor(devPolicy(ca, [redirecting.port, target.port]), {
          resolve: async (hostname) => {
            resolved.push(hostname);
            return [{ address: "127.0.0.1", family: 4 }];
          },
        });
        const error = await caught(egress.fetch(`${redirecting.origin}/mcp`, { method: "POST", body: "{}" }));
        expect(error).toMatchObject({ code: "egress_blocked", details: { rule: "redirect" } });
        expect(redirecting.received).toHaveLength(1);
        expect(target.received).toHaveLength(0);
        expect(resolved).toEqual([]);
      });
    }
  }

  test("the caller cannot ask for redirect: follow", async () => {
    const redirecting = await startServer(ca, (_req, res) => {
      res.statusCode = 302;
      res.setHeader("location", `${target.origin}/`);
      res.end();
    });
    const egress = egressFor(devPolicy(ca, [redirecting.port, target.port]));
    const error = await caught(egress.fetch(`${redirecting.origin}/`, { redirect: "follow" }));
    expect(error).toMatchObject({ code: "egress_blocked", details: { rule: "redirect" } });
    expect(target.received).toHaveLength(0);
  });
});

describe("timeouts", () => {
  test("a TLS handshake that never completes is remote_timeout (connect)", async () => {
    const silent = await startSilentTcpServer();
    cleanups.push(() => silent.close());
    const egress = egressFor(devPolicy(ca, [silent.port], { connectTimeoutMs: 150 }));
    const error = await caught(egress.fetch(`https://127.0.0.1:${silent.port}/`));
    expect(error).toMatchObject({ code: "remote_timeout", details: { phase: "connect" } });
  });

  test("a resolver that never answers is remote_timeout (connect)", async () => {
    const egress = egressFor(devPolicy(ca, [server.port], { connectTimeoutMs: 150 }), {
      resolve: () => new Promise(() => {}),
    });
    const error = await caught(egress.fetch(`https://slow-dns.example.com:${server.port}/`));
    expect(error).toMatchObject({ code: "remote_timeout", details: { phase: "connect" } });
  });

  test("headers that never come are remote_timeout (headers)", async () => {
    const stalled = await startServer(ca, () => {});
    const egress = egressFor(devPolicy(ca, [stalled.port], { headersTimeoutMs: 150 }));
    const error = await caught(egress.fetch(`${stalled.origin}/`));
    expect(error).toMatchObject({ code: "remote_timeout", details: { phase: "headers" } });
  });

  test("a body that stalls is remote_timeout (body) while it is read", async () => {
    const stalled = await startServer(ca, (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("partial");
    });
    const egress = egressFor(devPolicy(ca, [stalled.port], { bodyTimeoutMs: 150 }));
    const res = await egress.fetch(`${stalled.origin}/`);
    const error = await caught(res.text());
    expect(error).toMatchObject({ code: "remote_timeout", details: { phase: "body" } });
  });
});

describe("response size cap", () => {
  const cap = 64 * 1024;

  test("a declared Content-Length past the cap is refused before the body is read", async () => {
    const big = await startServer(ca, (_req, res) => {
      res.writeHead(200, { "content-length": String(cap + 1) });
      res.end(Buffer.alloc(cap + 1, 97));
    });
    const egress = egressFor(devPolicy(ca, [big.port], { maxResponseBytes: cap }));
    const error = await caught(egress.fetch(`${big.origin}/`));
    expect(error).toMatchObject({ code: "egress_blocked", details: { rule: "response_too_large" } });
  });

  test("a chunked body is cut off once it passes the cap", async () => {
    const big = await startServer(ca, (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      for (let i = 0; i < 20; i++) res.write(Buffer.alloc(8 * 1024, 97));
      res.end();
    });
    const egress = egressFor(devPolicy(ca, [big.port], { maxResponseBytes: cap }));
    const res = await egress.fetch(`${big.origin}/`);
    const error = await caught(res.arrayBuffer());
    expect(error).toMatchObject({ code: "egress_blocked", details: { rule: "response_too_large" } });
  });

  test("a compressed answer is decoded (gzip, br, and both in a row), and asks for none", async () => {
    const text = JSON.stringify({ ok: true, pad: "x".repeat(2_000) });
    const seen: (string | undefined)[] = [];
    const compressing = await startServer(ca, (req, res) => {
      seen.push(req.headers["accept-encoding"]);
      const encoding = decodeURIComponent(req.url?.slice(1) ?? "");
      let body = Buffer.from(text);
      for (const coding of encoding.split(", ")) {
        body = coding === "gzip" ? gzipSync(body) : brotliCompressSync(body);
      }
      res.writeHead(200, { "content-type": "application/json", "content-encoding": encoding });
      res.end(body);
    });
    const egress = egressFor(devPolicy(ca, [compressing.port]));
    for (const encoding of ["gzip", "br", "gzip, br"]) {
      const res = await egress.fetch(`${compressing.origin}/${encoding}`);
      expect(await res.text()).toBe(text);
    }
    expect(seen).toEqual([undefined, undefined, undefined]);
  });

  test("a compression bomb counts decoded bytes and is cut off at the cap", async () => {
    const bomb = gzipSync(Buffer.alloc(cap * 16, 0));
    const big = await startServer(ca, (_req, res) => {
      res.writeHead(200, { "content-encoding": "gzip", "content-length": String(bomb.byteLength) });
      res.end(bomb);
    });
    expect(bomb.byteLength).toBeLessThan(cap);
    const egress = egressFor(devPolicy(ca, [big.port], { maxResponseBytes: cap }));
    const res = await egress.fetch(`${big.origin}/`);
    const error = await caught(res.arrayBuffer());
    expect(error).toMatchObject({ code: "egress_blocked", details: { rule: "response_too_large" } });
  });

  test("a body exactly at the cap is delivered whole", async () => {
    const exact = await startServer(ca, (_req, res) => res.end(Buffer.alloc(cap, 98)));
    const egress = egressFor(devPolicy(ca, [exact.port], { maxResponseBytes: cap }));
    const res = await egress.fetch(`${exact.origin}/`);
    expect((await res.arrayBuffer()).byteLength).toBe(cap);
  });
});

describe("errors never carry the request's secrets", () => {
  test("refusals, timeouts and failures name the host only", async () => {
    const stalled = await startServer(ca, () => {});
    const egress = egressFor(devPolicy(ca, [stalled.port], { headersTimeoutMs: 100 }));
    const secret = "s3cr3t-T0KEN";
    const init = { headers: { authorization: `Bearer ${secret}`, "x-api-key": secret } };
    const errors = [
      await caught(egress.fetch(`${stalled.origin}/${secret}?k=${secret}`, init)),
      await caught(egress.fetch(`https://user:${secret}@mcp.example.com/`, init)),
      await caught(egress.fetch(`https://10.0.0.1/${secret}`, init)),
      await caught(egress.fetch(`http://mcp.example.com/${secret}`, init)),
    ];
    for (const error of errors) {
      expect(error.message).not.toContain(secret);
      expect(JSON.stringify(error.details)).not.toContain(secret);
    }
  });
});
