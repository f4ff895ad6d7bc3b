import { Hono } from "hono";
import { describe, expect, test } from "vitest";
import type { AppEnv } from "../http/env.ts";
import { handleError } from "../http/problem.ts";
import { dnsRebindingGuard } from "./dns-rebinding-guard.ts";

const appFor = (baseUrl: string) => {
  const app = new Hono<AppEnv>();
  app.onError(handleError);
  app.use("/mcp", dnsRebindingGuard(baseUrl));
  app.post("/mcp", (c) => c.text("ok"));
  return app;
};

describe("DNS-rebinding guard on /mcp", () => {
  test("a loopback server answers loopback hosts and origins only", async () => {
    const app = appFor("http://127.0.0.1:8787");
    for (const host of ["127.0.0.1:9999", "localhost", "[::1]:8787"]) {
      expect((await app.request(`http://${host}/mcp`, { method: "POST" })).status, host).toBe(200);
    }
    expect((await app.request("http://evil.example/mcp", { method: "POST" })).status).toBe(403);
    const foreign = await app.request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { origin: "https://evil.example" },
    });
    expect(foreign.status).toBe(403);
    const local = await app.request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { origin: "http://localhost:3000" },
    });
    expect(local.status).toBe(200);
  });

  test("a public server accepts any Host (proxies) but only its own Origin", async () => {
    const app = appFor("https://patchbay.example.com");
    expect((await app.request("http://internal-lb:8080/mcp", { method: "POST" })).status).toBe(200);
    const own = await app.request("http://x/mcp", {
      method: "POST",
      headers: { origin: "https://patchbay.example.com" },
    });
    expect(own.status).toBe(200);
    const other = await app.request("http://x/mcp", {
      method: "POST",
      headers: { origin: "http://localhost:3000" },
    });
    expect(other.status).toBe(403);
  });
});
