import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { Ajv, type ValidateFunction } from "ajv";
import type { SnapshotTool } from "../../platform/db/schema/tasks.ts";
import { MAX_NORMALIZED_RESULT_BYTES } from "../../platform/mcp-client/bounds.ts";

/** What the model sees of a remote tool's answer: text and structured content, bounded. */
export type NormalizedResult = {
  isError: boolean;
  text: string;
  structuredContent?: Record<string, unknown> | undefined;
  truncated: boolean;
};

const marker = (omitted: number) => `\n…[truncated by patchbay: ${omitted} more bytes omitted]`;

/**
 * Text blocks are kept (joined), other block kinds are named but not inlined (an image or an
 * embedded binary resource means nothing to a text model and can be huge). The whole result is
 * capped at 64 KiB: structured content that does not fit is dropped with a note, text is cut
 * with a marker saying how much was left out.
 */
export function normalizeResult(result: CallToolResult): NormalizedResult {
  const parts: string[] = [];
  for (const block of result.content ?? []) {
    if (block.type === "text") parts.push(block.text);
    else if (block.type === "resource" && "text" in block.resource) parts.push(String(block.resource.text));
    else parts.push(`[${block.type} content omitted]`);
  }
  let text = parts.join("\n");
  let structuredContent = result.structuredContent;
  let truncated = false;
  let budget = MAX_NORMALIZED_RESULT_BYTES;
  if (structuredContent !== undefined) {
    const size = Buffer.byteLength(JSON.stringify(structuredContent));
    if (size > budget / 2) {
      structuredContent = undefined;
      truncated = true;
      text += `\n[structured content of ${size} bytes omitted: over the result bound]`;
    } else {
      budget -= size;
    }
  }
  const bytes = Buffer.byteLength(text);
  if (bytes > budget) {
    const keep = Buffer.from(text)
      .subarray(0, budget - 100)
      .toString("utf8")
      .replace(/\uFFFD$/, "");
    text = keep + marker(bytes - Buffer.byteLength(keep));
    truncated = true;
  }
  return {
    isError: result.isError === true,
    text,
    ...(structuredContent ? { structuredContent } : {}),
    truncated,
  };
}

const ajv = new Ajv({ strict: false, validateSchema: false, allErrors: false });
const compiled = new WeakMap<Record<string, unknown>, ValidateFunction | null>();

/**
 * Checks structured content against the output schema the owner approved (spec: results are
 * checked before the agent sees them). Returns a message when it does not conform — or when
 * the approved schema cannot be compiled, since an unverifiable result must not pass as verified.
 */
export function validateStructuredContent(tool: SnapshotTool, content: unknown): string | undefined {
  if (!tool.outputSchema || content === undefined) return undefined;
  let validate = compiled.get(tool.outputSchema);
  if (validate === undefined) {
    try {
      validate = ajv.compile(tool.outputSchema);
    } catch {
      validate = null;
    }
    compiled.set(tool.outputSchema, validate);
  }
  if (validate === null)
    return `The approved output schema of ${tool.toolName} cannot be used to check its result.`;
  if (validate(content)) return undefined;
  const first = validate.errors?.[0];
  return `The result of ${tool.toolName} does not match its approved output schema${first ? ` (${first.instancePath || "/"} ${first.message ?? ""})` : ""}.`;
}
