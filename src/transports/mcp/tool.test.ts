import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { eq } from "drizzle-orm";
import { z } from "zod";
import { describe, expect, test } from "../../../test/fixtures.ts";
import type { MemberActor } from "../../actor.ts";
import type { ServiceContext } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { resolveApiKey } from "../../features/api-keys/resolve-api-key.ts";
import { idempotencyKeys } from "../../platform/db/schema/idempotency-keys.ts";
import { callerAuthInfo } from "./caller.ts";
import { defineTool, type RegistrableTool } from "./tool.ts";
import { ERROR_META_KEY } from "./tool-errors.ts";

async function serve(deps: Deps, apiKey: string, tools: RegistrableTool[], withCaller = true) {
  const actor = await resolveApiKey(deps, apiKey);
  if (!actor) throw new Error("bootstrap key did not resolve");
  const ctx: ServiceContext<MemberActor> = { deps, actor, channel: "mcp", requestId: "req_tooltest" };
  const server = new McpServer({ name: "t", version: "1" });
  for (const tool of tools) tool.register(server);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  // What the HTTP transport does with serve-request.ts's authInfo: every message carries the caller.
  const deliver = a.onmessage;
  if (withCaller) {
    a.onmessage = (message, extra) => deliver?.(message, { ...extra, authInfo: callerAuthInfo(ctx) });
  }
  const client = new Client({ name: "c", version: "1" });
  await client.connect(b);
  return {
    call: async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as CallToolResult,
  };
}

describe("defineTool", () => {
  test("an unexpected error is a generic isError with the request id only, and is logged", async ({
    deps,
    owner,
    logs,
  }) => {
    const boom = defineTool({
      name: "boom",
      title: "Boom",
      description: "Fails.",
      access: "read",
      input: { n: z.number().describe("n") },
      output: { n: z.number() },
      annotations: { readOnlyHint: true },
      async run() {
        throw new Error("connection string postgres://admin:hunter2@db");
      },
    });
    const { call } = await serve(deps, owner.apiKey, [boom]);
    const result = await call("boom", { n: 1 });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result)).not.toContain("hunter2");
    expect(result.content[0]).toMatchObject({ type: "text", text: expect.stringContaining("req_tooltest") });
    expect(result._meta?.[ERROR_META_KEY]).toEqual({
      code: "internal",
      message: expect.any(String),
      requestId: "req_tooltest",
    });
    expect(logs.text()).toContain("MCP tool failed");
  });

  test("a failed write releases its idempotency key; a success stores it", async ({ deps, owner }) => {
    let fail = true;
    const flaky = defineTool({
      name: "flaky",
      title: "Flaky",
      description: "Fails once.",
      access: "write",
      input: { n: z.number().describe("n") },
      output: { n: z.number() },
      annotations: { readOnlyHint: false },
      async run(input) {
        if (fail) throw new AppError("conflict", "not yet");
        return { text: "ok", data: { n: input.n } };
      },
    });
    const { call } = await serve(deps, owner.apiKey, [flaky]);
    const first = await call("flaky", { n: 1, idempotencyKey: "flaky-1" });
    expect(first._meta?.[ERROR_META_KEY]).toMatchObject({ code: "conflict" });
    const key = eq(idempotencyKeys.key, "flaky-1");
    expect(await deps.db.select().from(idempotencyKeys).where(key)).toHaveLength(0);
    fail = false;
    const second = await call("flaky", { n: 1, idempotencyKey: "flaky-1" });
    expect(second.structuredContent).toEqual({ n: 1, idempotencyKey: "flaky-1", replayed: false });
    const [row] = await deps.db.select().from(idempotencyKeys).where(key);
    expect(row?.state).toBe("completed");
    fail = true; // a replay never runs the tool again
    expect((await call("flaky", { n: 1, idempotencyKey: "flaky-1" })).structuredContent).toMatchObject({
      replayed: true,
    });
  });

  test("a call that reaches a tool without its request's caller fails and runs nothing", async ({
    deps,
    owner,
  }) => {
    let ran = false;
    const probe = defineTool({
      name: "probe",
      title: "Probe",
      description: "Runs.",
      access: "read",
      input: { n: z.number().describe("n") },
      output: { n: z.number() },
      annotations: { readOnlyHint: true },
      async run(input) {
        ran = true;
        return { text: "ran", data: { n: input.n } };
      },
    });
    const { call } = await serve(deps, owner.apiKey, [probe], false);
    const result = await call("probe", { n: 1 });
    expect(result.isError).toBe(true);
    expect(result.content[0]).toMatchObject({
      text: expect.stringContaining("without its request's caller"),
    });
    expect(ran).toBe(false);
  });
});
