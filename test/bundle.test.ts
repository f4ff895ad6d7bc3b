// The installed service as `npm start` runs it: bin/patchbay.js runs the bundle in dist/ (built at
// install), and a first start on an empty data directory loads the migrated PGlite template. The
// other tests import src/; this one checks what the bundle does differently: files found beside
// the sources (migrations, the OTLP schema, package.json), the conversion worker's own entry, and
// the first start's output.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleIsCurrent } from "../bin/bundle-state.js";
import { hasMigratedTemplate } from "../src/platform/db/pglite-template.ts";
import { type SpawnedServer, spawnServer } from "./lib/spawn-server.ts";
import { jsonSpan, jsonTraces } from "./lib/telemetry.ts";
import { eventually } from "./lib/wait.ts";

const dataDir = mkdtempSync(join(tmpdir(), "patchbay-bundle-"));
let server: SpawnedServer;

beforeAll(async () => {
  server = await spawnServer({
    env: { PATCHBAY_DATA_DIR: dataDir, PATCHBAY_DEV_CHAIN: "off", LOG_LEVEL: "info" },
    readyTimeoutMs: 120_000,
  });
}, 180_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the bundle in dist/", () => {
  it("is current, with the migrated template beside it: the server ran the bundle, not the sources", () => {
    expect(bundleIsCurrent()).toBe(true);
    expect(hasMigratedTemplate()).toBe(true);
    expect(server.output()).not.toContain("rebuilding");
  });

  it("says it creates the embedded database before anything else, then prints the demo tenant", () => {
    const output = server.output();
    const first = output.split("\n").find((line) => line.trim() !== "") ?? "";
    expect(first).toContain("creating the embedded database");
    expect(output).toContain("first run: a demo organisation was created");
  });

  it("serves the API, and ingests a trace through the conversion worker's own bundle", async () => {
    const apiKey = /Owner API key:\s+(\S+)/.exec(server.output())?.[1] ?? "";
    const environmentId = /Environment:\s+(\S+)/.exec(server.output())?.[1] ?? "";
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${server.baseUrl}/api/v1${path}`, {
        ...init,
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...init.headers },
      });
    expect((await api("/me")).status).toBe(200);
    // Files the sources find beside themselves: package.json (the version), swagger-ui's assets.
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    const openapi = (await (await api("/openapi.json")).json()) as { info: { version: string } };
    expect(openapi.info.version).toBe(manifest.version);
    expect((await fetch(`${server.baseUrl}/api/v1/docs`)).status).toBe(200);
    const created = await api(`/environments/${environmentId}/publishable-keys`, {
      method: "POST",
      body: JSON.stringify({ name: "bundle" }),
    });
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: string };

    const exported = await fetch(`${server.baseUrl}/v1/traces`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(jsonTraces([jsonSpan({ name: "GET /bundled" })], "bundled-service")),
    });
    expect(exported.status).toBe(200);
    await eventually(
      async () => {
        const res = await api(`/environments/${environmentId}/services`);
        const body = (await res.json()) as { items: { service: string }[] };
        return body.items.some((s) => s.service === "bundled-service") || undefined;
      },
      60_000,
      "the exported span's service to be listed",
    );
    expect(server.output()).not.toMatch(/conversion worker failed|Cannot find module/);
  });
});
