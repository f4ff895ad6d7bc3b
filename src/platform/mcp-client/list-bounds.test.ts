// DESIGN §5 bounds, enforced on real listings over HTTPS (pagination, counts, bytes, odd tools).
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import { makeTestCa, type TestCa } from "../../../test/lib/egress-servers.ts";
import { egressTo, rejection } from "../../../test/lib/mcp-egress.ts";
import {
  echoTool,
  type McpServerOptions,
  type McpTestServer,
  manyTools,
  startMcpServer,
  type TestTool,
} from "../../../test/lib/mcp-servers.ts";
import { MAX_LISTING_BYTES } from "./bounds.ts";
import { listRemoteTools } from "./remote-client.ts";
import { hashManifest } from "./tool-hash.ts";

const cleanups: (() => Promise<void>)[] = [];
let ca: TestCa;

beforeAll(async () => {
  ca = await makeTestCa();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(options: McpServerOptions): Promise<McpTestServer> {
  const started = await startMcpServer({ ca, ...options });
  cleanups.push(() => started.close());
  return started;
}

function list(remote: McpTestServer) {
  const egress = egressTo([remote]);
  cleanups.push(() => egress.close());
  return listRemoteTools({ egress, endpointUrl: remote.url, auth: { kind: "none" } });
}

const raw = (definition: TestTool["definition"]): TestTool => ({ definition });

describe("pagination", () => {
  test("250 tools in pages of 30 are all listed, in order, one request per page", async () => {
    const remote = await server({ tools: manyTools(250), pageSize: 30 });
    const listing = await list(remote);
    expect(listing.tools).toHaveLength(250);
    expect(listing.tools.map((tool) => tool.name)).toEqual(
      manyTools(250).map((tool) => tool.definition.name),
    );
    expect(listing.tools.every((tool) => tool.approvable)).toBe(true);
    expect(remote.count("tools/list")).toBe(9);
    expect(remote.requests.flatMap((r) => (r.rpcMethod === "tools/list" ? [r.cursor ?? null] : []))).toEqual([
      null,
      "30",
      "60",
      "90",
      "120",
      "150",
      "180",
      "210",
      "240",
    ]);
    expect(listing.manifestHash).toBe(hashManifest(listing.tools));
  });

  test("the manifest hash depends on the tools, not on page size or listing order", async () => {
    const tools = manyTools(40);
    const paged = await list(await server({ tools, pageSize: 7 }));
    const reversed = await list(await server({ tools: [...tools].reverse() }));
    expect(reversed.manifestHash).toBe(paged.manifestHash);
    const remote = await server({ tools });
    const before = await list(remote);
    remote.setTools(
      tools.map((tool, i) => (i === 17 ? echoTool(tool.definition.name, { description: "changed" }) : tool)),
    );
    expect((await list(remote)).manifestHash).not.toBe(before.manifestHash);
  });

  test("exactly 1,000 tools and exactly 100 pages are within bounds", async () => {
    expect((await list(await server({ tools: manyTools(1_000), pageSize: 100 }))).tools).toHaveLength(1_000);
    expect((await list(await server({ tools: manyTools(100), pageSize: 1 }))).tools).toHaveLength(100);
  });
});

describe("discovery-level bounds fail the discovery", () => {
  test("more than 1,000 tools: discovery_limit_exceeded, stopping at the page that passed it", async () => {
    const remote = await server({ tools: manyTools(1_050), pageSize: 100 });
    const error = await rejection(list(remote));
    expect(error).toMatchObject({
      code: "discovery_limit_exceeded",
      status: 422,
      details: { limit: 1_000, observed: 1_050, bound: "tools" },
    });
    expect(remote.count("tools/list")).toBe(11);
  });

  test("more than 100 pages: discovery_limit_exceeded without asking for page 101", async () => {
    const remote = await server({ tools: manyTools(150), pageSize: 1 });
    const error = await rejection(list(remote));
    expect(error).toMatchObject({
      code: "discovery_limit_exceeded",
      details: { limit: 100, observed: 101, bound: "pages" },
    });
    expect(error.message).toContain("more than 100 pages");
    expect(remote.count("tools/list")).toBe(100);
  });

  test("more than 8 MiB received over the listing: discovery_limit_exceeded", async () => {
    // 300 tools × ~30 KB (each page 1.5 MB: under the per-response cap, over 8 MiB in total).
    const tools = manyTools(300).map((tool) =>
      echoTool(tool.definition.name, { description: "d".repeat(30_000) }),
    );
    const remote = await server({ tools, pageSize: 50 });
    const error = await rejection(list(remote));
    expect(error).toMatchObject({
      code: "discovery_limit_exceeded",
      details: { limit: MAX_LISTING_BYTES, bound: "bytes" },
    });
    expect(error.details?.observed).toBeGreaterThan(MAX_LISTING_BYTES);
    expect(remote.count("tools/list")).toBe(6);
  });
});

describe("tool-level bounds list the tool as not approvable", () => {
  test("oversized description, oversized or deep schema, non-object schema, bad name", async () => {
    let deep: Record<string, unknown> = { type: "object" };
    for (let level = 1; level < 20; level++) deep = { type: "object", additionalProperties: deep };
    const remote = await server({
      tools: [
        echoTool("fine"),
        echoTool("wordy", { description: "w".repeat(5_000) }),
        echoTool("huge", { inputSchema: { type: "object", description: "x".repeat(40_000) } }),
        echoTool("deep", { outputSchema: deep }),
        raw({ name: "scalar", inputSchema: { type: "string" } }),
        echoTool("white space"),
      ],
      pageSize: 2,
    });
    const listing = await list(remote);
    const byName = Object.fromEntries(listing.tools.map((tool) => [tool.name, tool]));
    expect(byName.fine).toMatchObject({ approvable: true });
    expect(byName.wordy?.reason).toBe("description is longer than 4096 characters (5000)");
    expect(byName.huge?.reason).toMatch(
      /^inputSchema is larger than 32 KiB as canonical JSON \(\d+ bytes\)$/,
    );
    expect(byName.deep?.reason).toBe("outputSchema is nested deeper than 16 levels (20)");
    expect(byName.scalar?.reason).toBe('inputSchema is not an object schema (type must be "object")');
    expect(byName["white space"]?.approvable).toBe(false);
    // Not approvable tools keep their full definition for review and count in the manifest hash.
    expect(byName.wordy?.description).toHaveLength(5_000);
    expect(listing.manifestHash).toBe(hashManifest(listing.tools));
  });

  test("a name listed twice (across pages) makes both copies not approvable", async () => {
    const remote = await server({
      tools: [
        echoTool("a"),
        echoTool("dup"),
        echoTool("b"),
        echoTool("dup", { description: "the other one" }),
      ],
      pageSize: 2,
    });
    const listing = await list(remote);
    expect(listing.tools.map((tool) => [tool.name, tool.approvable, tool.reason])).toEqual([
      ["a", true, undefined],
      ["dup", false, "duplicate name"],
      ["b", true, undefined],
      ["dup", false, "duplicate name"],
    ]);
  });

  test("only the hashed fields are kept; null optional fields read as absent", async () => {
    const remote = await server({
      tools: [
        raw({
          name: "t",
          title: null,
          description: null,
          inputSchema: { type: "object" },
          outputSchema: null,
          icons: [{ src: "https://example.com/i.png" }],
          _meta: { x: 1 },
          execution: { taskSupport: "optional" },
        }),
      ],
    });
    const [tool] = (await list(remote)).tools;
    expect(tool && Object.keys(tool)).toEqual(["name", "inputSchema", "hash", "approvable"]);
  });

  test.each<[string, TestTool["definition"], string]>([
    ["without an inputSchema", { name: "t" }, "result.tools[0].inputSchema"],
    ["with an array as inputSchema", { name: "t", inputSchema: [] }, "result.tools[0].inputSchema"],
    [
      "with a numeric name",
      { name: 7 as unknown as string, inputSchema: { type: "object" } },
      "result.tools[0].name",
    ],
  ])(
    "a tool %s makes the listing malformed: remote_unreachable pointing at it",
    async (_, definition, where) => {
      const remote = await server({ tools: [echoTool("ok"), raw(definition)], pageSize: 1 });
      const error = await rejection(list(remote));
      expect(error).toMatchObject({ code: "remote_unreachable", details: { reason: "protocol" } });
      expect(error.message).toContain(`(page 2) with a malformed result at ${where}`);
    },
  );
});
