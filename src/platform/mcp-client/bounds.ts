import { AppError } from "../../errors.ts";
import type { ToolDefinition } from "../db/schema/mcp-connections.ts";
import type { DiscoveredTool } from "../db/schema/mcp-discoveries.ts";
import { type Encoded, encodeJson, encodeString } from "./canonical-json.ts";
import { isStorableText, jsonShape, storableCopy } from "./json-shape.ts";
import { canonicalTool, sha256 } from "./tool-hash.ts";

// DESIGN §5 "Bounds". Past the first three, discovery fails (`discovery_limit_exceeded`);
// a tool past the per-tool ones is still listed, with `approvable: false` and a reason.

/** Tools in one listing, all pages together. */
export const MAX_TOOLS = 1_000;
/** `tools/list` pages in one listing. */
export const MAX_PAGES = 100;
/** Response bytes received during one listing (decoded, every response of the session). */
export const MAX_LISTING_BYTES = 8 * 1024 * 1024;

export const TOOL_NAME_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
/** Unicode code points. */
export const MAX_DESCRIPTION_CHARS = 4_096;
/** UTF-8 bytes of the schema's RFC 8785 canonical JSON. */
export const MAX_SCHEMA_BYTES = 32 * 1024;
/** Nesting of objects/arrays: `{}` is 1, `{"a":{}}` is 2. */
export const MAX_SCHEMA_DEPTH = 16;
/**
 * Nesting past which a listing cannot be processed at all (canonicalised, stored as JSON:
 * V8's JSON.stringify overflows its stack a few thousand levels down), so discovery fails
 * instead of listing the tool. Far past anything a real schema needs.
 */
export const MAX_PROCESSABLE_DEPTH = 512;

/** The agent's frozen task snapshot (DESIGN §5; enforced by the task runtime). */
export const MAX_TASK_SNAPSHOT_BYTES = 256 * 1024;
/** One remote tool result as received (enforced by the task runtime). */
export const MAX_REMOTE_RESULT_BYTES = 1024 * 1024;
/** One remote tool result as normalised for the agent (enforced by the task runtime). */
export const MAX_NORMALIZED_RESULT_BYTES = 64 * 1024;

export type DiscoveryLimit = "tools" | "pages" | "bytes" | "depth";

/** `discovery_limit_exceeded` with the limit that was passed and what was seen. */
export function discoveryLimitExceeded(
  what: DiscoveryLimit,
  limit: number,
  observed: number,
  message: string,
): AppError {
  return new AppError("discovery_limit_exceeded", message, { limit, observed, bound: what });
}

/**
 * A tool as listed for review: its canonical definition, hash, and whether it may be
 * approved (with every reason it may not, joined by "; "), with its JCS text (what the hash
 * covers) for the manifest hash. Throws `discovery_limit_exceeded` only for a definition nested
 * too deep to process at all (MAX_PROCESSABLE_DEPTH).
 */
export function assessTool(raw: ToolDefinition): { tool: DiscoveredTool; json: string } {
  let definition = canonicalTool(raw);
  let fields = encodeFields(definition);
  const reasons: string[] = [];
  const texts = [definition.name, definition.title ?? "", definition.description ?? ""];
  const suspect = Object.values(fields).some((field) => field.suspect) || !texts.every(isStorableText);
  if (suspect && !isStorable(definition)) {
    // Kept for review with the offending characters replaced; the copy is what is hashed.
    definition = storableCopy(definition);
    fields = encodeFields(definition);
    reasons.push("contains U+0000 or a lone surrogate (shown replaced by U+FFFD)");
  }

  if (!TOOL_NAME_PATTERN.test(definition.name)) reasons.push(`name must match ${TOOL_NAME_PATTERN.source}`);
  const chars = definition.description === undefined ? 0 : codePoints(definition.description);
  if (chars > MAX_DESCRIPTION_CHARS) {
    reasons.push(`description is longer than ${MAX_DESCRIPTION_CHARS} characters (${chars})`);
  }
  for (const field of ["inputSchema", "outputSchema"] as const) {
    const encoded = fields[field];
    if (!encoded) continue;
    if (encoded.depth > MAX_SCHEMA_DEPTH) {
      reasons.push(`${field} is nested deeper than ${MAX_SCHEMA_DEPTH} levels (${encoded.depth})`);
    }
    const bytes = Buffer.byteLength(encoded.json, "utf8");
    if (bytes > MAX_SCHEMA_BYTES) {
      reasons.push(
        `${field} is larger than ${MAX_SCHEMA_BYTES / 1024} KiB as canonical JSON (${bytes} bytes)`,
      );
    }
  }
  if (definition.inputSchema.type !== "object") {
    reasons.push('inputSchema is not an object schema (type must be "object")');
  }

  const json = assembleToolJson(definition, fields);
  const tool: DiscoveredTool = { ...definition, hash: sha256(json), approvable: reasons.length === 0 };
  if (reasons.length > 0) tool.reason = reasons.join("; ");
  return { tool, json };
}

type Fields = Partial<Record<"inputSchema" | "outputSchema" | "annotations", Encoded>>;

/** Each JSON-valued field serialised once (JCS) and measured; too deep to process → throws. */
function encodeFields(definition: ToolDefinition): Fields {
  const fields: Fields = {};
  for (const field of ["inputSchema", "outputSchema", "annotations"] as const) {
    const value = definition[field];
    if (value === undefined) continue;
    const encoded = encodeJson(value, MAX_PROCESSABLE_DEPTH);
    if (!encoded) {
      // Measured again without recursion, for the exact figure.
      const depth = jsonShape(value).depth;
      throw discoveryLimitExceeded(
        "depth",
        MAX_PROCESSABLE_DEPTH,
        depth,
        `The ${field} of tool ${quote(definition.name)} is nested ${depth} levels deep; nothing past ${MAX_PROCESSABLE_DEPTH} levels can be processed.`,
      );
    }
    fields[field] = encoded;
  }
  return fields;
}

const isStorable = (definition: ToolDefinition): boolean =>
  [definition.name, definition.title ?? "", definition.description ?? ""].every(isStorableText) &&
  !jsonShape([definition.inputSchema, definition.outputSchema ?? null, definition.annotations ?? null])
    .unstorable;

/**
 * The canonical tool's JCS text from its already-serialised parts: members in code-unit order
 * (annotations, description, inputSchema, name, outputSchema, title). Equal to
 * canonicalToolJson(definition) — tested — without serialising the schemas twice.
 */
function assembleToolJson(definition: ToolDefinition, fields: Fields): string {
  const members: string[] = [];
  if (fields.annotations) members.push(`"annotations":${fields.annotations.json}`);
  if (definition.description !== undefined)
    members.push(`"description":${encodeString(definition.description)}`);
  members.push(`"inputSchema":${fields.inputSchema?.json ?? "{}"}`);
  members.push(`"name":${encodeString(definition.name)}`);
  if (fields.outputSchema) members.push(`"outputSchema":${fields.outputSchema.json}`);
  if (definition.title !== undefined) members.push(`"title":${encodeString(definition.title)}`);
  return `{${members.join(",")}}`;
}

/** Marks every tool whose name is listed more than once: none of them can be approved. */
export function markDuplicateNames(tools: DiscoveredTool[]): DiscoveredTool[] {
  const seen = new Map<string, number>();
  for (const tool of tools) seen.set(tool.name, (seen.get(tool.name) ?? 0) + 1);
  return tools.map((tool) => {
    if ((seen.get(tool.name) ?? 0) < 2) return tool;
    const reason = tool.reason ? `duplicate name; ${tool.reason}` : "duplicate name";
    return { ...tool, approvable: false, reason };
  });
}

function codePoints(text: string): number {
  // Only a text with more code units than the limit can have more code points than it.
  if (text.length <= MAX_DESCRIPTION_CHARS) return text.length;
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** A remote-supplied name for a message: JSON-quoted and cut short. */
const quote = (name: string): string => JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
