import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { listen } from "../../../test/http.ts";

const run = promisify(execFile);
const inspectorBuild = resolve("node_modules/@modelcontextprotocol/inspector-cli/build");

/**
 * The official MCP conformance suite's server scenarios that apply to a tools-only management
 * server (docs/mcp.md names the others and why they do not apply). The suite connects without
 * credentials, so the listener adds the owner's API key; authentication itself is covered by
 * mcp-http.test.ts.
 */
const applicable = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"];

type Check = { id: string; name: string; status: string; errorMessage?: string };

describe("MCP conformance suite (@modelcontextprotocol/conformance)", () => {
  test("the applicable server scenarios pass", async ({ app, owner }) => {
    const server = await listen({
      fetch(request) {
        const headers = new Headers(request.headers);
        headers.set("authorization", `Bearer ${owner.apiKey}`);
        return app.fetch(new Request(request, { headers }));
      },
    });
    const out = mkdtempSync(join(tmpdir(), "patchbay-conformance-"));
    try {
      const failures: string[] = [];
      for (const scenario of applicable) {
        await run(
          process.execPath,
          [
            "node_modules/@modelcontextprotocol/conformance/dist/index.js",
            "server",
            "--url",
            `${server.url}/mcp`,
            "--scenario",
            scenario,
            "-o",
            join(out, scenario),
          ],
          { timeout: 60_000 },
        ).catch((error: { stdout?: string }) => failures.push(`${scenario}: ${error.stdout ?? error}`));
        const checks = readChecks(join(out, scenario));
        expect(checks.length, scenario).toBeGreaterThan(0);
        for (const check of checks) {
          if (check.status === "FAILURE")
            failures.push(`${scenario}/${check.id}: ${check.errorMessage ?? ""}`);
        }
      }
      expect(failures).toEqual([]);
    } finally {
      await server.close();
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe("MCP Inspector CLI (@modelcontextprotocol/inspector-cli)", () => {
  test("lists the management tools and calls one", async ({ app, owner }) => {
    const server = await listen(app);
    const inspector = (...args: string[]) =>
      run(
        process.execPath,
        [
          join(inspectorBuild, "index.js"),
          `${server.url}/mcp`,
          "--transport",
          "http",
          "--header",
          `Authorization: Bearer ${owner.apiKey}`,
          ...args,
        ],
        // The CLI finds its package.json relative to the working directory.
        { timeout: 60_000, cwd: inspectorBuild },
      );
    try {
      const listed = JSON.parse((await inspector("--method", "tools/list")).stdout) as {
        tools: { name: string }[];
      };
      expect(listed.tools.map((t) => t.name)).toContain("list_mcp_connections");
      const called = JSON.parse(
        (
          await inspector(
            "--method",
            "tools/call",
            "--tool-name",
            "list_mcp_connections",
            "--tool-arg",
            `environmentId=${owner.environmentId}`,
          )
        ).stdout,
      ) as { isError?: boolean; structuredContent?: { items: unknown[] } };
      expect(called.isError ?? false).toBe(false);
      expect(called.structuredContent?.items).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

function readChecks(dir: string): Check[] {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter(
    (f) => f.name === "checks.json",
  );
  return files.flatMap((f) => JSON.parse(readFileSync(join(f.parentPath, f.name), "utf8")) as Check[]);
}
