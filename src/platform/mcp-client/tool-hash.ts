import { hash } from "node:crypto";
import canonicalize from "canonicalize";
import type { ToolDefinition } from "../db/schema/mcp-connections.ts";
import { encodeJson } from "./canonical-json.ts";

/**
 * The part of a tool that approval freezes and drift compares (DESIGN §5): name, title,
 * description, both schemas and annotations. Everything else a server sends (`icons`,
 * `_meta`, `execution`, review fields such as `hash`) is left out, and an absent field stays
 * absent — so `{}` and a missing `outputSchema` are different tools.
 */
export function canonicalTool(tool: ToolDefinition): ToolDefinition {
  return {
    name: tool.name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
  };
}

/** RFC 8785 (JCS) text of the canonical tool. Throws on a lone surrogate (JCS refuses them). */
export function canonicalToolJson(tool: ToolDefinition): string {
  const canonical = canonicalTool(tool);
  const encoded = encodeJson(canonical);
  if (encoded && !encoded.suspect) return encoded.json;
  // Text with U+0000 or surrogates: the reference implementation decides (and refuses lone
  // surrogates, which the fast path would escape).
  const text = canonicalize(canonical);
  if (text === undefined) throw new TypeError("value has no JSON representation");
  return text;
}

/** `sha256:<hex>` over the JCS text of the canonical tool. */
export function hashTool(tool: ToolDefinition): string {
  return sha256(canonicalToolJson(tool));
}

/**
 * `sha256:<hex>` over the JCS text of the canonical tools sorted by name: the order a server
 * lists them in does not matter; a rename or any content change does. Names are compared by
 * UTF-16 code units (as JCS sorts keys), never by locale; equal names (a server listing one
 * name twice) are ordered by their canonical text so the hash stays order-independent.
 */
export function hashManifest(tools: readonly ToolDefinition[]): string {
  return hashCanonicalManifest(tools.map((tool) => ({ name: tool.name, json: canonicalToolJson(tool) })));
}

/** hashManifest over tools whose JCS text is already known (a listing computes it once per tool). */
export function hashCanonicalManifest(entries: readonly { name: string; json: string }[]): string {
  const sorted = [...entries].sort(
    (a, b) => compareCodeUnits(a.name, b.name) || compareCodeUnits(a.json, b.json),
  );
  // JCS of an array is its elements' JCS texts joined by commas, so this equals
  // canonicalize(sortedTools) without serialising any tool twice.
  return sha256(`[${sorted.map((entry) => entry.json).join(",")}]`);
}

/** `sha256:<hex>` of a text (UTF-8). */
export function sha256(text: string): string {
  return `sha256:${hash("sha256", text, "hex")}`;
}

const compareCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
