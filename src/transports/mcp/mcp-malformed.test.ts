import { describe, expect, test } from "../../../test/fixtures.ts";
import { callTool, connectMcp } from "../../../test/lib/mcp-client.ts";
import { ERROR_META_KEY } from "./tool-errors.ts";

type Property = { type?: string | string[]; format?: string };

describe("MCP tools with malformed arguments", () => {
  test("NUL, a lone surrogate or oversized text in any string argument is a tool error with a code, never internal", async ({
    app,
    owner,
  }) => {
    const client = await connectMcp(app, owner.apiKey);
    const { tools } = await client.listTools();
    const failures: string[] = [];
    let calls = 0;
    for (const tool of tools) {
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, Property>;
      const strings = Object.entries(properties)
        .filter(([, p]) => p.type === "string" || (Array.isArray(p.type) && p.type.includes("string")))
        .map(([name]) => name);
      // Plausible values for every required argument, so the bad one is what is judged.
      const base: Record<string, unknown> = {};
      for (const name of tool.inputSchema.required ?? []) {
        base[name] = name === "environmentId" ? owner.environmentId : crypto.randomUUID();
      }
      for (const name of strings) {
        for (const bad of ["a\u0000b", "\u0000", "\ud800", "a\udc00b", "x".repeat(100_000)]) {
          calls++;
          const result = await callTool(client, tool.name, { ...base, [name]: bad });
          const code = (result._meta?.[ERROR_META_KEY] as { code?: string } | undefined)?.code;
          const text = result.content[0]?.type === "text" ? result.content[0].text : "";
          // The SDK's own schema check answers in text (no code); anything else must carry one.
          const schemaRefusal = /Input validation error|Invalid arguments/i.test(text);
          if (result.isError && (code === "internal" || (!code && !schemaRefusal))) {
            failures.push(`${tool.name}.${name}=${JSON.stringify(bad).slice(0, 20)}: ${text.slice(0, 160)}`);
          }
        }
      }
    }
    expect(calls).toBeGreaterThan(20);
    expect(failures).toEqual([]);
  });
});
