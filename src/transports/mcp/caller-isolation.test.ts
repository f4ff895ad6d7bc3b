import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { vi } from "vitest";
import { describe, expect, type Tenant, test } from "../../../test/fixtures.ts";
import { createConnection } from "../../../test/lib/connections.ts";
import { MCP_URL } from "../../../test/lib/mcp-client.ts";
import { eventually } from "../../../test/lib/wait.ts";
import type { Connection } from "../../features/connections/schemas.ts";
import { serversInRelease } from "./serve-request.ts";
import { ERROR_META_KEY } from "./tool-errors.ts";

// The /mcp servers and their tools are built once and lent to one request at a time; the caller
// travels with each request. These tests try to make one caller's request run as another's.

type Rpc = {
  status: number;
  requestId: string | null;
  body: {
    result?: {
      isError?: boolean;
      structuredContent?: Record<string, unknown>;
      _meta?: Record<string, unknown>;
    };
    error?: { code: number };
  };
};

type AppLike = { request(input: string, init?: RequestInit): Response | Promise<Response> };

async function post(app: AppLike, key: string, body: string): Promise<Rpc> {
  const res = await app.request(MCP_URL, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      "content-length": String(Buffer.byteLength(body)),
    },
    body,
  });
  return {
    status: res.status,
    requestId: res.headers.get("x-request-id"),
    body: (await res.json()) as Rpc["body"],
  };
}

/** Waits until the servers of the requests just answered are back in the pool, to be lent again. */
const settle = () =>
  eventually(
    async () => (serversInRelease() === 0 ? true : undefined),
    5_000,
    "the answered requests' MCP servers back in the pool",
  );

const call = (name: string, args: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } });

/**
 * One request of `who`, of a kind that checks the caller it ran as: its own data only, and — in
 * every tool error — its own request id, which no two requests share.
 */
function probe(app: AppLike, who: { tenant: Tenant; own: Connection; other: Connection }, kind: number) {
  const { tenant, own, other } = who;
  const env = { environmentId: tenant.environmentId };
  const check = async (body: string, expectIt: (r: Rpc) => void) =>
    expectIt(await post(app, tenant.apiKey, body));
  switch (kind % 6) {
    case 0:
      return check(call("list_mcp_connections", env), (r) => {
        expect(r.body.result?.structuredContent?.items).toEqual([expect.objectContaining({ id: own.id })]);
      });
    case 1:
      return check(call("get_mcp_connection", { ...env, connectionId: own.id }), (r) => {
        expect(r.body.result?.structuredContent?.connection).toMatchObject({ id: own.id, alias: own.alias });
      });
    case 2:
      // The other organisation's connection, in the other organisation's environment: not found.
      return check(
        call("get_mcp_connection", { environmentId: other.environmentId, connectionId: other.id }),
        (r) => {
          expect(r.body.result?.isError).toBe(true);
          expect(r.body.result?._meta?.[ERROR_META_KEY]).toMatchObject({
            code: "not_found",
            requestId: r.requestId,
          });
        },
      );
    case 3:
      // A tool error of this caller names this request, not another one in flight.
      return check(call("get_mcp_connection", { ...env, connectionId: "mcp_doesnotexist" }), (r) => {
        expect(r.body.result?._meta?.[ERROR_META_KEY]).toMatchObject({ requestId: r.requestId });
      });
    case 4:
      // Failures before any handler runs: the server still goes back to the pool.
      return check("{ not json", (r) => expect(r.status).toBe(400));
    default:
      // An initialize leaves its client's capabilities on the server, which is then not lent again.
      return check(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: { elicitation: {} },
            clientInfo: { name: `client-of-${tenant.organizationId}`, version: "1" },
          },
        }),
        (r) => expect(r.body.result).toMatchObject({ serverInfo: { name: "patchbay" } }),
      );
  }
}

describe("/mcp caller isolation on shared servers", () => {
  test("many concurrent calls from two organisations each run as their own caller and see only their data", async ({
    app,
    owner,
    stranger,
    mcp,
  }) => {
    const server = await mcp.start();
    const ownerConn = await createConnection(owner.api, owner.environmentId, "owner-only", server.url);
    const strangerConn = await createConnection(
      stranger.api,
      stranger.environmentId,
      "stranger-only",
      server.url,
    );
    const a = { tenant: owner, own: ownerConn, other: strangerConn };
    const b = { tenant: stranger, own: strangerConn, other: ownerConn };
    // Waves alternate between everything at once and one organisation after the other, so servers
    // last lent to one organisation serve the other, both while it is busy and when it is idle.
    for (let wave = 0; wave < 4; wave++) {
      const n = 60;
      if (wave % 2 === 0) {
        await Promise.all(Array.from({ length: n }, (_, i) => probe(app, i % 2 ? a : b, i >> 1)));
      } else {
        await Promise.all(Array.from({ length: n / 2 }, (_, i) => probe(app, a, i)));
        await settle();
        await Promise.all(Array.from({ length: n / 2 }, (_, i) => probe(app, b, i)));
      }
      await settle();
    }
  });

  test("writes from two organisations at once, under the same idempotency key, land each in its own", async ({
    app,
    owner,
    stranger,
    mcp,
  }) => {
    const server = await mcp.start();
    const create = (tenant: Tenant, i: number) =>
      post(
        app,
        tenant.apiKey,
        call("create_mcp_connection", {
          environmentId: tenant.environmentId,
          alias: `c${i}`,
          displayName: `C ${i}`,
          endpointUrl: server.url,
          auth: { kind: "none" },
          idempotencyKey: `shared-${i}`,
        }),
      );
    // One organisation alone, then the other (on servers the first just used), then both at once.
    const results = [
      ...(await Promise.all([0, 1, 2, 3, 4].map((i) => create(owner, i)))),
      ...(await settle().then(() => Promise.all([0, 1, 2, 3, 4].map((i) => create(stranger, i))))),
      ...(await settle().then(() =>
        Promise.all([5, 6, 7, 8, 9].flatMap((i) => [create(owner, i), create(stranger, i)])),
      )),
    ];
    for (const r of results) expect(r.body.result?.structuredContent).toMatchObject({ replayed: false });
    for (const tenant of [owner, stranger]) {
      const res = await tenant.api.get(`/environments/${tenant.environmentId}/mcp-connections`);
      const page = (await res.json()) as { items: Connection[] };
      expect(page.items.map((c) => c.alias).sort()).toEqual(
        Array.from({ length: 10 }, (_, i) => `c${i}`).sort(),
      );
    }
  });

  test("a request that throws mid-answer leaves nothing to the callers that follow", async ({
    app,
    owner,
    stranger,
    mcp,
  }) => {
    const server = await mcp.start();
    const a = {
      tenant: owner,
      own: await createConnection(owner.api, owner.environmentId, "mine", server.url),
      other: undefined,
    };
    const b = {
      tenant: stranger,
      own: await createConnection(stranger.api, stranger.environmentId, "theirs", server.url),
      other: a.own,
    };
    const aWithOther = { ...a, other: b.own };
    const handle = WebStandardStreamableHTTPServerTransport.prototype.handleRequest;
    const spy = vi
      .spyOn(WebStandardStreamableHTTPServerTransport.prototype, "handleRequest")
      .mockImplementationOnce(async function (this: WebStandardStreamableHTTPServerTransport, ...args) {
        await handle.apply(this, args);
        throw new Error("transport failed after handling");
      });
    try {
      const failed = await app.request(MCP_URL, {
        method: "POST",
        headers: {
          authorization: `Bearer ${owner.apiKey}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: call("list_mcp_connections", { environmentId: owner.environmentId }),
      });
      expect(failed.status).toBe(500);
    } finally {
      spy.mockRestore();
    }
    await settle();
    await Promise.all(Array.from({ length: 24 }, (_, i) => probe(app, i % 2 ? aWithOther : b, i % 4)));
  });
});
