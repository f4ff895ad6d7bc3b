import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { describe, expect, test } from "vitest";
import type { ToolDefinition } from "../db/schema/mcp-connections.ts";
import { canonicalTool, hashManifest, hashTool } from "./tool-hash.ts";

const lookup: ToolDefinition = {
  name: "lookup",
  title: "Look up",
  description: "Finds a record.",
  inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
  outputSchema: { type: "object", properties: { found: { type: "boolean" } } },
  annotations: { readOnlyHint: true },
};
const ping: ToolDefinition = { name: "ping", inputSchema: { type: "object" } };
const zeta: ToolDefinition = { name: "zeta", description: "Last.", inputSchema: { type: "object" } };

const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

describe("canonicalTool", () => {
  test("keeps only the six hashed fields and omits absent ones", () => {
    const listed = { ...ping, hash: "sha256:x", approvable: true, icons: [{ src: "x" }], _meta: { a: 1 } };
    expect(canonicalTool(listed)).toEqual({ name: "ping", inputSchema: { type: "object" } });
    expect(Object.keys(canonicalTool(lookup))).toEqual([
      "name",
      "title",
      "description",
      "inputSchema",
      "outputSchema",
      "annotations",
    ]);
    expect("title" in canonicalTool({ ...ping, title: undefined })).toBe(false);
  });
});

describe("hashTool", () => {
  test("is sha256 over the RFC 8785 text of the canonical tool", () => {
    expect(hashTool(lookup)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(hashTool(ping)).toBe(sha256('{"inputSchema":{"type":"object"},"name":"ping"}'));
  });

  test("ignores key order and fields outside the definition", () => {
    const reordered: ToolDefinition = {
      annotations: { readOnlyHint: true },
      inputSchema: { required: ["id"], properties: { id: { type: "string" } }, type: "object" },
      outputSchema: { properties: { found: { type: "boolean" } }, type: "object" },
      description: "Finds a record.",
      title: "Look up",
      name: "lookup",
    };
    expect(hashTool(reordered)).toBe(hashTool(lookup));
    expect(hashTool({ ...lookup, hash: "sha256:0", approvable: false } as ToolDefinition)).toBe(
      hashTool(lookup),
    );
  });

  test.each<[string, ToolDefinition]>([
    ["a rename", { ...lookup, name: "lookup2" }],
    ["a title change", { ...lookup, title: "Look up!" }],
    ["a description change", { ...lookup, description: "Finds a record. Also deletes it." }],
    [
      "an input schema change deep down",
      { ...lookup, inputSchema: { ...lookup.inputSchema, properties: { id: { type: "number" } } } },
    ],
    ["an output schema change", { ...lookup, outputSchema: { type: "object" } }],
    ["an annotation change", { ...lookup, annotations: { readOnlyHint: false } }],
    ["a dropped annotation block", { ...lookup, annotations: undefined }],
  ])("%s changes the hash", (_, changed) => {
    expect(hashTool(changed)).not.toBe(hashTool(lookup));
  });

  test("absent and present-but-empty fields differ", () => {
    expect(hashTool({ ...ping, outputSchema: {} })).not.toBe(hashTool(ping));
    expect(hashTool({ ...ping, description: "" })).not.toBe(hashTool(ping));
    expect(hashTool({ ...ping, annotations: {} })).not.toBe(hashTool(ping));
    expect(hashTool({ ...ping, title: undefined })).toBe(hashTool(ping));
  });
});

describe("hashManifest", () => {
  test("is sha256 over the RFC 8785 text of the canonical tools sorted by name", () => {
    const expected = sha256(canonicalize([lookup, ping, zeta].map(canonicalTool)) ?? "");
    expect(hashManifest([zeta, lookup, ping])).toBe(expected);
  });

  test("does not depend on listing order", () => {
    expect(hashManifest([ping, zeta, lookup])).toBe(hashManifest([lookup, ping, zeta]));
    expect(hashManifest([zeta, ping, lookup])).toBe(hashManifest([lookup, ping, zeta]));
  });

  test("changes with a rename, any content change, an added or a removed tool", () => {
    const base = hashManifest([lookup, ping]);
    expect(hashManifest([lookup, { ...ping, name: "pong" }])).not.toBe(base);
    expect(hashManifest([lookup, { ...ping, annotations: { idempotentHint: true } }])).not.toBe(base);
    expect(hashManifest([lookup, ping, zeta])).not.toBe(base);
    expect(hashManifest([lookup])).not.toBe(base);
    expect(hashManifest([])).toBe(sha256("[]"));
  });

  test("sorts by UTF-16 code units, not locale", () => {
    const named = (name: string): ToolDefinition => ({ name, inputSchema: { type: "object" } });
    const expected = sha256(canonicalize(["B", "_", "a", "é"].map(named)) ?? "");
    expect(hashManifest(["é", "a", "_", "B"].map(named))).toBe(expected);
  });

  test("stays order-independent when a name is listed twice", () => {
    const twin = { ...ping, description: "the other ping" };
    expect(hashManifest([ping, twin, lookup])).toBe(hashManifest([lookup, twin, ping]));
  });
});
