import { describe, expect, test } from "vitest";
import { AppError } from "../../errors.ts";
import type { ToolDefinition } from "../db/schema/mcp-connections.ts";
import type { DiscoveredTool } from "../db/schema/mcp-discoveries.ts";
import {
  assessTool as assess,
  MAX_DESCRIPTION_CHARS,
  MAX_PROCESSABLE_DEPTH,
  MAX_SCHEMA_BYTES,
  MAX_SCHEMA_DEPTH,
  markDuplicateNames,
} from "./bounds.ts";
import { hashTool } from "./tool-hash.ts";

/** The assessed tool alone (its JCS text is checked through the hash). */
const assessTool = (definition: ToolDefinition): DiscoveredTool => assess(definition).tool;

const tool = (extra: Partial<ToolDefinition> = {}): ToolDefinition => ({
  name: "lookup",
  description: "Finds a record.",
  inputSchema: { type: "object", properties: { id: { type: "string" } } },
  ...extra,
});

/** An object schema nested `depth` levels deep (the schema itself is level 1). */
function nested(depth: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: "object" };
  for (let level = 1; level < depth; level++) schema = { type: "object", additionalProperties: schema };
  return schema;
}

/** An object schema whose JSON text is exactly `bytes` long. */
function sized(bytes: number): Record<string, unknown> {
  const overhead = JSON.stringify({ type: "object", description: "" }).length;
  return { type: "object", description: "x".repeat(bytes - overhead) };
}

describe("assessTool", () => {
  test("a tool within every bound is approvable, keeps its definition and carries its hash", () => {
    const assessed = assessTool(tool({ title: "Look up", annotations: { readOnlyHint: true } }));
    expect(assessed).toEqual({
      name: "lookup",
      title: "Look up",
      description: "Finds a record.",
      inputSchema: { type: "object", properties: { id: { type: "string" } } },
      annotations: { readOnlyHint: true },
      hash: hashTool(tool({ title: "Look up", annotations: { readOnlyHint: true } })),
      approvable: true,
    });
    expect("reason" in assessed).toBe(false);
  });

  test.each(["", "a".repeat(129), "has space", "slash/name", "ünïcode", "trailing\n", "colon:name"])(
    "name %j is not approvable",
    (name) => {
      const assessed = assessTool(tool({ name }));
      expect(assessed).toMatchObject({ name, approvable: false });
      expect(assessed.reason).toContain("name must match ^[A-Za-z0-9._-]{1,128}$");
    },
  );

  test.each(["a", "A.b_c-9", "x".repeat(128)])("name %j is approvable", (name) => {
    expect(assessTool(tool({ name })).approvable).toBe(true);
  });

  test("descriptions are limited to 4,096 characters (code points, not UTF-16 units)", () => {
    expect(assessTool(tool({ description: "d".repeat(MAX_DESCRIPTION_CHARS) })).approvable).toBe(true);
    expect(assessTool(tool({ description: "😀".repeat(MAX_DESCRIPTION_CHARS) })).approvable).toBe(true);
    const long = assessTool(tool({ description: "d".repeat(MAX_DESCRIPTION_CHARS + 1) }));
    expect(long).toMatchObject({
      approvable: false,
      reason: "description is longer than 4096 characters (4097)",
    });
    expect(long.description).toHaveLength(4097);
  });

  test.each(["inputSchema", "outputSchema"] as const)(
    "%s is limited to 32 KiB of canonical JSON",
    (field) => {
      expect(assessTool(tool({ [field]: sized(MAX_SCHEMA_BYTES) })).approvable).toBe(true);
      const big = assessTool(tool({ [field]: sized(MAX_SCHEMA_BYTES + 1) }));
      expect(big).toMatchObject({
        approvable: false,
        reason: `${field} is larger than 32 KiB as canonical JSON (32769 bytes)`,
      });
    },
  );

  test("schema size counts UTF-8 bytes", () => {
    const overhead = JSON.stringify({ type: "object", description: "" }).length;
    const schema = { type: "object", description: "é".repeat((MAX_SCHEMA_BYTES - overhead) / 2 + 1) };
    expect(JSON.stringify(schema).length).toBeLessThan(MAX_SCHEMA_BYTES);
    expect(assessTool(tool({ inputSchema: schema })).approvable).toBe(false);
  });

  test.each(["inputSchema", "outputSchema"] as const)("%s may nest 16 levels, not 17", (field) => {
    expect(assessTool(tool({ [field]: nested(MAX_SCHEMA_DEPTH) })).approvable).toBe(true);
    expect(assessTool(tool({ [field]: nested(MAX_SCHEMA_DEPTH + 1) }))).toMatchObject({
      approvable: false,
      reason: `${field} is nested deeper than 16 levels (17)`,
    });
  });

  test.each<[string, Record<string, unknown>]>([
    ["no type", { properties: {} }],
    ["type string", { type: "string" }],
    ["type as a list", { type: ["object"] }],
  ])("an inputSchema with %s is not an object schema", (_, inputSchema) => {
    expect(assessTool(tool({ inputSchema }))).toMatchObject({
      approvable: false,
      reason: 'inputSchema is not an object schema (type must be "object")',
    });
  });

  test("every reason is given, joined by semicolons", () => {
    const assessed = assessTool(
      tool({ name: "bad name", description: "d".repeat(5000), inputSchema: { type: "array" } }),
    );
    expect(assessed.reason?.split("; ")).toEqual([
      "name must match ^[A-Za-z0-9._-]{1,128}$",
      "description is longer than 4096 characters (5000)",
      'inputSchema is not an object schema (type must be "object")',
    ]);
  });

  test("a definition too deep to process fails the discovery with the depth observed", () => {
    let error: unknown;
    try {
      assessTool(tool({ inputSchema: nested(MAX_PROCESSABLE_DEPTH + 10) }));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      code: "discovery_limit_exceeded",
      details: { limit: MAX_PROCESSABLE_DEPTH, observed: MAX_PROCESSABLE_DEPTH + 10, bound: "depth" },
    });
    // 10,000 levels are measured without overflowing the stack.
    expect(() => assessTool(tool({ annotations: nested(10_000) }))).toThrow(AppError);
  });

  test("text that cannot be stored (NUL, lone surrogate) is replaced and makes the tool not approvable", () => {
    const assessed = assessTool(
      tool({
        description: "a\u0000b",
        inputSchema: { type: "object", properties: { "\ud800": { type: "string" } } },
      }),
    );
    expect(assessed).toMatchObject({
      approvable: false,
      description: "a\ufffdb",
      inputSchema: { type: "object", properties: { "\ufffd": { type: "string" } } },
    });
    expect(assessed.reason).toContain("U+0000 or a lone surrogate");
    expect(assessed.hash).toBe(hashTool(assessed));
    // A well-formed surrogate pair is fine.
    expect(assessTool(tool({ description: "ok 😀" })).approvable).toBe(true);
  });

  test("a '__proto__' key is an ordinary key: kept and hashed", () => {
    const inputSchema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}');
    const assessed = assessTool(tool({ inputSchema }));
    expect(Object.keys((assessed.inputSchema.properties ?? {}) as object)).toEqual(["__proto__"]);
    expect(assessed.hash).not.toBe(
      assessTool(tool({ inputSchema: { type: "object", properties: {} } })).hash,
    );
  });
});

describe("assessTool's hash", () => {
  test.each<[string, ToolDefinition]>([
    ["minimal", { name: "m", inputSchema: { type: "object" } }],
    [
      "every field",
      { ...tool(), title: "T", outputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
    ],
    [
      "non-ASCII and escapes",
      tool({
        title: "é😀\n",
        description: 'q"uote\n\u0001',
        inputSchema: { type: "object", "€": [1, -0, 1e21] },
      }),
    ],
    ["empty strings", tool({ title: "", description: "" })],
  ])("equals hashTool for %s (assembled from parts, one serialisation)", (_, definition) => {
    expect(assessTool(definition).hash).toBe(hashTool(definition));
  });
});

describe("markDuplicateNames", () => {
  test("every tool sharing a name becomes not approvable; the others are untouched", () => {
    const listed: DiscoveredTool[] = [
      assessTool(tool({ name: "a" })),
      assessTool(tool({ name: "b" })),
      assessTool(tool({ name: "a", description: "again" })),
      assessTool(tool({ name: "b", description: "d".repeat(5000) })),
    ];
    const [a1, b1, a2, b2] = markDuplicateNames(listed);
    expect(a1).toMatchObject({ approvable: false, reason: "duplicate name" });
    expect(a2).toMatchObject({ approvable: false, reason: "duplicate name" });
    expect(b1).toMatchObject({ approvable: false, reason: "duplicate name" });
    expect(b2?.reason).toBe("duplicate name; description is longer than 4096 characters (5000)");
    expect(markDuplicateNames([assessTool(tool())])[0]?.approvable).toBe(true);
  });
});
