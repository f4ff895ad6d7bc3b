import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import {
  devPolicy,
  makeTestCa,
  refusedOrigin,
  startHttpsServer,
  type TestCa,
} from "../../../test/lib/egress-servers.ts";
import { egressTo as egressToServers, rejection } from "../../../test/lib/mcp-egress.ts";
import { EVERYTHING_BASE_TOOLS, startEverythingServer } from "../../../test/lib/mcp-everything.ts";
import type { McpHttps } from "../../../test/lib/mcp-https.ts";
import { echoTool, type McpServerOptions, slowTool, startMcpServer } from "../../../test/lib/mcp-servers.ts";
import type { AppError } from "../../errors.ts";
import type { EgressPolicy } from "../egress/address-policy.ts";
import { createEgress, type Egress } from "../egress/egress-fetch.ts";
import type { RemoteAuth } from "./remote-auth-header.ts";
import { listRemoteTools, withRemoteClient } from "./remote-client.ts";
import { hashManifest } from "./tool-hash.ts";

const SECRET = "s3cr3t-Credential-7f2a";
const cleanups: (() => Promise<void>)[] = [];
let ca: TestCa;

beforeAll(async () => {
  ca = await makeTestCa();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function server(options: McpServerOptions = {}) {
  const started = await startMcpServer({ ca, ...options });
  cleanups.push(() => started.close());
  return started;
}

function egressTo(servers: McpHttps[], overrides: Partial<EgressPolicy> = {}): Egress {
  const egress = egressToServers(servers, overrides);
  cleanups.push(() => egress.close());
  return egress;
}

const list = (target: McpHttps, auth: RemoteAuth = { kind: "none" }, egress = egressTo([target])) =>
  listRemoteTools({ egress, endpointUrl: target.url, auth });

/** Nothing a user sees may hold the credential, a header or the endpoint path. */
function expectNoLeak(error: AppError) {
  const visible = `${error.message} ${JSON.stringify(error.details ?? {})}`;
  expect(visible).not.toContain(SECRET);
  expect(visible).not.toContain("/mcp");
  expect(visible.toLowerCase()).not.toContain("bearer");
}

describe("listRemoteTools against real MCP servers over HTTPS", () => {
  test("no auth: initialize, then tools/list; tools assessed and hashed", async () => {
    const remote = await server({ tools: [echoTool("echo"), echoTool("lookup", { title: "Look up" })] });
    const listing = await list(remote);
    expect(listing.tools.map((tool) => [tool.name, tool.approvable])).toEqual([
      ["echo", true],
      ["lookup", true],
    ]);
    expect(listing.tools[1]).toMatchObject({ title: "Look up", inputSchema: { type: "object" } });
    expect(listing.manifestHash).toBe(hashManifest(listing.tools));
    const methods = remote.requests.flatMap((r) => (r.rpcMethod ? [r.rpcMethod] : []));
    expect(methods).toEqual(["initialize", "notifications/initialized", "tools/list"]);
    expect(remote.requests.every((r) => r.headers.authorization === undefined)).toBe(true);
  });

  test("bearer: the right token lists, and reaches the server once per request", async () => {
    const remote = await server({ auth: { kind: "bearer", token: SECRET } });
    const listing = await list(remote, { kind: "bearer", credential: SECRET });
    expect(listing.tools.map((tool) => tool.name)).toEqual(["echo"]);
    for (const request of remote.requests) {
      expect(request.status).not.toBe(401);
      expect(request.rawHeaders.filter((h) => h.toLowerCase() === "authorization")).toHaveLength(1);
      expect(request.headers.authorization).toBe(`Bearer ${SECRET}`);
    }
  });

  test.each([401, 403] as const)(
    "bearer: a refused token (HTTP %i) is remote_auth_failed, never echoed",
    async (status) => {
      const remote = await server({ auth: { kind: "bearer", token: "another-token" }, rejectStatus: status });
      const error = await rejection(list(remote, { kind: "bearer", credential: SECRET }));
      expect(error).toMatchObject({
        code: "remote_auth_failed",
        status: 422,
        details: { remoteStatus: status },
      });
      expect(error.message).toContain("127.0.0.1");
      expectNoLeak(error);
      // Refused at initialize: nothing was listed.
      expect(remote.count("tools/list")).toBe(0);
    },
  );

  test("no credential configured but the server wants one: remote_auth_failed saying so", async () => {
    const remote = await server({ auth: { kind: "bearer", token: SECRET } });
    const error = await rejection(list(remote));
    expect(error.code).toBe("remote_auth_failed");
    expect(error.message).toContain("requires authentication");
  });

  test("api_key: sent in the configured header only; a wrong key is remote_auth_failed", async () => {
    const remote = await server({ auth: { kind: "api_key", headerName: "X-Api-Key", value: SECRET } });
    const auth: RemoteAuth = { kind: "api_key", headerName: "X-Api-Key", credential: SECRET };
    expect((await list(remote, auth)).tools).toHaveLength(1);
    for (const request of remote.requests) {
      expect(request.headers["x-api-key"]).toBe(SECRET);
      expect(request.headers.authorization).toBeUndefined();
    }
    remote.setAuth({ kind: "api_key", headerName: "X-Api-Key", value: "rotated" });
    const error = await rejection(list(remote, auth));
    expect(error.code).toBe("remote_auth_failed");
    expectNoLeak(error);
  });

  test("a credential that is not a valid header value is refused before anything is sent", async () => {
    const remote = await server();
    const error = await rejection(list(remote, { kind: "bearer", credential: `${SECRET}\r\nX-Injected: 1` }));
    expect(error.code).toBe("invalid_request");
    expectNoLeak(error);
    const headerError = await rejection(
      list(remote, { kind: "api_key", headerName: "Mcp-Session-Id", credential: SECRET }),
    );
    expect(headerError.code).toBe("invalid_request");
    expect(remote.requests).toHaveLength(0);
  });

  test("a redirecting server is egress_blocked and the redirect target is never contacted", async () => {
    const target = await server();
    const remote = await server();
    remote.redirectTo(`${target.url}?stolen=1`);
    const error = await rejection(
      list(remote, { kind: "bearer", credential: SECRET }, egressTo([remote, target])),
    );
    expect(error).toMatchObject({ code: "egress_blocked", details: { rule: "redirect" } });
    expectNoLeak(error);
    expect(remote.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
  });

  test("a closed port is remote_unreachable (refused)", async () => {
    const refused = await refusedOrigin();
    cleanups.push(() => refused.close());
    const egress = createEgress(devPolicy(ca, [refused.port]));
    cleanups.push(() => egress.close());
    const error = await rejection(
      listRemoteTools({ egress, endpointUrl: `${refused.origin}/mcp`, auth: { kind: "none" } }),
    );
    expect(error).toMatchObject({ code: "remote_unreachable", status: 502, details: { reason: "refused" } });
  });

  test("an untrusted certificate is remote_unreachable (tls)", async () => {
    const remote = await server();
    const error = await rejection(list(remote, { kind: "none" }, egressTo([remote], { extraCa: undefined })));
    expect(error).toMatchObject({ code: "remote_unreachable", details: { reason: "tls" } });
    expect(remote.requests).toHaveLength(0);
  });

  test("a server that does not answer in time is remote_timeout and the session is closed", async () => {
    const remote = await server({ listDelayMs: 60_000 });
    const warm = await server();
    const egress = egressTo([remote, warm]);
    // Egress loads its HTTP client with its first request; that load is not what is timed here.
    await listRemoteTools({ egress, endpointUrl: warm.url, auth: { kind: "none" } });
    const started = performance.now();
    const error = await rejection(
      listRemoteTools({ egress, endpointUrl: remote.url, auth: { kind: "none" }, timeoutMs: 3_000 }),
    );
    expect(error).toMatchObject({ code: "remote_timeout", status: 504, details: { phase: "request" } });
    // Cut at its own timeout, long before the server's answer (a budget that a slowed machine still
    // spends reaching tools/list: the abandoned request is what is checked next).
    expect(performance.now() - started).toBeLessThan(30_000);
    // The pending tools/list was abandoned, not left open.
    await expect
      .poll(() => remote.requests.find((r) => r.rpcMethod === "tools/list")?.ended, { timeout: 5_000 })
      .toBe(true);
  });

  test.each<[string, (res: import("node:http").ServerResponse) => void, Record<string, unknown>]>([
    [
      "an HTML page",
      (res) => res.writeHead(200, { "content-type": "text/html" }).end("<h1>hi</h1>"),
      { reason: "not_mcp" },
    ],
    [
      "a 404",
      (res) => res.writeHead(404, { "content-type": "text/plain" }).end(`no ${SECRET}`),
      { reason: "http_status", remoteStatus: 404 },
    ],
    [
      "JSON that is not JSON-RPC",
      (res) => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'),
      { reason: "not_mcp" },
    ],
    [
      "broken JSON",
      (res) => res.writeHead(200, { "content-type": "application/json" }).end('{"jsonrpc":'),
      { reason: "not_mcp" },
    ],
  ])("a server answering %s is remote_unreachable, with none of its text", async (_, answer, details) => {
    const plain = await startHttpsServer(ca, (_req, res) => answer(res));
    cleanups.push(() => plain.close());
    const egress = createEgress(devPolicy(ca, [plain.port]));
    cleanups.push(() => egress.close());
    const error = await rejection(
      listRemoteTools({
        egress,
        endpointUrl: `${plain.origin}/mcp`,
        auth: { kind: "bearer", credential: SECRET },
      }),
    );
    expect(error).toMatchObject({ code: "remote_unreachable", details });
    expectNoLeak(error);
  });

  test("the reference server (server-everything) is discovered with its known tools", async () => {
    const everything = await startEverythingServer({ ca });
    cleanups.push(() => everything.close());
    const listing = await list(everything);
    const names = listing.tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining([...EVERYTHING_BASE_TOOLS]));
    expect(listing.tools.every((tool) => tool.approvable)).toBe(true);
    expect(listing.tools.find((tool) => tool.name === "get-sum")).toMatchObject({
      inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
    });
    // It opened a session; closing ended it.
    expect(everything.requests.at(-1)).toMatchObject({ httpMethod: "DELETE" });
  });
});

describe("withRemoteClient", () => {
  test("hands over an initialized client whose calls go through egress, then closes", async () => {
    const remote = await server({ auth: { kind: "bearer", token: SECRET } });
    const result = await withRemoteClient(
      { egress: egressTo([remote]), endpointUrl: remote.url, auth: { kind: "bearer", credential: SECRET } },
      (client) => client.callTool({ name: "echo", arguments: { text: "hi" } }),
    );
    expect(result).toMatchObject({
      structuredContent: { text: "hi" },
      content: [{ type: "text", text: '{"text":"hi"}' }],
    });
    expect(remote.count("tools/call", "echo")).toBe(1);
  });

  test("results are still checked against a listed tool's outputSchema (the SDK's validator, built on use)", async () => {
    const typed = echoTool("typed", {
      outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    });
    const remote = await server({ tools: [typed] });
    const error = await rejection(
      withRemoteClient(
        { egress: egressTo([remote]), endpointUrl: remote.url, auth: { kind: "none" } },
        async (client) => {
          await client.listTools();
          return client.callTool({ name: "typed", arguments: { text: "not a number" } });
        },
      ),
    );
    expect(error).toMatchObject({
      code: "remote_unreachable",
      details: { reason: "protocol", rpcCode: -32602 },
    });
    expect(remote.count("tools/call", "typed")).toBe(1);
  });

  test("an error thrown by fn comes back unchanged, and the session still closes", async () => {
    const everything = await startEverythingServer({ ca });
    cleanups.push(() => everything.close());
    const bug = new Error("bug in caller");
    await expect(
      withRemoteClient(
        { egress: egressTo([everything]), endpointUrl: everything.url, auth: { kind: "none" } },
        async () => {
          throw bug;
        },
      ),
    ).rejects.toBe(bug);
    // The session was ended (DELETE) and its standalone SSE stream (GET) released.
    expect(everything.requests.map((r) => r.httpMethod)).toContain("DELETE");
    await expect
      .poll(() => everything.requests.find((r) => r.httpMethod === "GET")?.ended, { timeout: 5_000 })
      .toBe(true);
  });

  test("a server that dies mid-call is remote_unreachable", async () => {
    const remote = await server({ tools: [slowTool(10_000)] });
    const call = withRemoteClient(
      { egress: egressTo([remote]), endpointUrl: remote.url, auth: { kind: "none" } },
      (client) => client.callTool({ name: "slow", arguments: {} }),
    );
    await expect.poll(() => remote.count("tools/call", "slow"), { timeout: 5_000 }).toBe(1);
    await remote.kill();
    const error = await rejection(call);
    expect(error).toMatchObject({ code: "remote_unreachable", details: { reason: "network" } });
  });
});
