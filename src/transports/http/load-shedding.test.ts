import { describe, expect, test } from "../../../test/fixtures.ts";
import { listen, problem } from "../../../test/http.ts";
import { exchangeUntilClosed, heldBody, streamed } from "../../../test/lib/held-request.ts";
import { MCP_URL } from "../../../test/lib/mcp-client.ts";
import { createApp } from "../../app.ts";
import { ConfigError, loadConfig } from "../../config.ts";
import type { Deps } from "../../deps.ts";
import { withServices } from "../../services.ts";

type Traffic = Deps["config"]["traffic"];

/** The file's app rebuilt with other admission settings (its own shedding counter). */
async function withApp(
  deps: Deps,
  traffic: Partial<Traffic>,
  run: (app: ReturnType<typeof createApp>) => Promise<void>,
): Promise<void> {
  // Its own telemetry runtime too: closing it leaves the file's shared one running.
  const own = withServices({
    ...deps,
    config: { ...deps.config, traffic: { ...deps.config.traffic, ...traffic } },
  });
  try {
    await run(createApp(own));
  } finally {
    await own.telemetry.close();
  }
}

/** Starts a REST create whose body the test holds back; resolves once the request is being worked on. */
async function holdRestRequest(app: ReturnType<typeof createApp>, apiKey: string, name: string) {
  const held = heldBody(JSON.stringify({ name }));
  const response = app.request(
    "/api/v1/environments",
    streamed({
      method: "POST",
      headers: {
        authorization: `Bearer ${apiKey}`,
        "content-type": "application/json",
        "idempotency-key": crypto.randomUUID(),
      },
      body: held.body,
    }),
  );
  await held.reading;
  return { response: Promise.resolve(response), release: held.release };
}

describe("load shedding", () => {
  test("past the bound, REST, MCP and x402 answer 503 overloaded at once; health, OTLP and the web UI do not", async ({
    deps,
    owner,
  }) => {
    await withApp(deps, { maxConcurrentRequests: 2 }, async (app) => {
      const first = await holdRestRequest(app, owner.apiKey, "held-1");
      const second = await holdRestRequest(app, owner.apiKey, "held-2");

      const rest = await app.request("/api/v1/me", { headers: { authorization: `Bearer ${owner.apiKey}` } });
      expect(rest.status).toBe(503);
      expect(rest.headers.get("retry-after")).toBe("1");
      // Nothing of a bodiless request is left unread: its connection may stay open.
      expect(rest.headers.get("connection")).toBeNull();
      expect(await problem(rest)).toMatchObject({ code: "overloaded", retryAfterSeconds: 1 });

      const mcp = await app.request(MCP_URL, {
        method: "POST",
        headers: {
          authorization: `Bearer ${owner.apiKey}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(mcp.status).toBe(503);
      expect(mcp.headers.get("retry-after")).toBe("1");
      expect((await problem(mcp)).code).toBe("overloaded");

      // Shed before the payment gate: not `payments_unavailable`, and never a 402 challenge.
      for (const path of ["/x402/services", "/x402/signup", "/x402"]) {
        const paid = await app.request(path, { method: path === "/x402/signup" ? "POST" : "GET" });
        expect(paid.status, path).toBe(503);
        expect((await problem(paid)).code, path).toBe("overloaded");
      }

      expect((await app.request("/healthz")).status).toBe(200);
      expect((await app.request("/readyz")).status).toBe(200);
      expect((await app.request("/login")).status).toBe(200);
      // OTLP has its own admission: here it refuses for want of a key, not for load.
      const otlp = await app.request("/v1/traces", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(otlp.status).toBe(401);

      first.release();
      second.release();
      expect((await first.response).status).toBe(201);
      expect((await second.response).status).toBe(201);
      // The held requests gave their places back.
      const after = await app.request("/api/v1/me", { headers: { authorization: `Bearer ${owner.apiKey}` } });
      expect(after.status).toBe(200);
    });
  });

  test("a shed request whose body was not read is answered with Connection: close, then the connection is closed", async ({
    deps,
    owner,
  }) => {
    await withApp(deps, { maxConcurrentRequests: 1 }, async (app) => {
      const server = await listen(app);
      try {
        const held = await holdRestRequest(app, owner.apiKey, "held");
        // A body is declared but not sent: the answer must not wait for it.
        const answer = await exchangeUntilClosed(
          server.port,
          [
            "POST /api/v1/environments HTTP/1.1",
            `host: 127.0.0.1:${server.port}`,
            `authorization: Bearer ${owner.apiKey}`,
            "content-type: application/json",
            `idempotency-key: ${crypto.randomUUID()}`,
            "content-length: 100000",
            "",
            "",
          ].join("\r\n"),
        );
        expect(answer.status).toBe(503);
        expect(answer.headers.connection).toBe("close");
        expect(answer.headers["retry-after"]).toBe("1");
        expect(JSON.parse(answer.body)).toMatchObject({ code: "overloaded" });
        expect(answer.closed).toBe("end");
        held.release();
        expect((await held.response).status).toBe(201);
      } finally {
        await server.close();
      }
    });
  });

  test("answers under the bound are not marked to close", async ({ owner }) => {
    const res = await owner.api.get("/me");
    expect(res.status).toBe(200);
    expect(res.headers.get("connection")).toBeNull();
  });

  test("PATCHBAY_MAX_CONCURRENT_REQUESTS: 256 by default; a whole number from 1", () => {
    expect(loadConfig({}).traffic.maxConcurrentRequests).toBe(256);
    expect(loadConfig({ PATCHBAY_MAX_CONCURRENT_REQUESTS: "32" }).traffic.maxConcurrentRequests).toBe(32);
    for (const bad of ["0", "-1", "1.5", "many", "100001"]) {
      expect(() => loadConfig({ PATCHBAY_MAX_CONCURRENT_REQUESTS: bad }), bad).toThrow(ConfigError);
      try {
        loadConfig({ PATCHBAY_MAX_CONCURRENT_REQUESTS: bad });
      } catch (error) {
        expect((error as ConfigError).variable).toBe("PATCHBAY_MAX_CONCURRENT_REQUESTS");
      }
    }
  });
});
