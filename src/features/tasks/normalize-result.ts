import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
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
