import type { ToolDefinition } from "../../platform/db/schema/mcp-connections.ts";

/** `read`: the task agent may call the tool on its own. `write`: every call waits for a person. */
export type AccessClass = "read" | "write";

/**
 * The server's own word that a tool only reads: `readOnlyHint: true` and not
 * `destructiveHint: true`. MCP annotations are hints a server chooses freely, so this only ever
 * narrows what the agent may do on its own; absent or odd values mean `write`.
 */
export const annotatedReadOnly = (tool: Pick<ToolDefinition, "annotations">): boolean =>
  tool.annotations?.readOnlyHint === true && tool.annotations?.destructiveHint !== true;

/** An approved tool's class: read when annotated read-only or attested so by an owner or admin. */
export const toolAccess = (
  tool: Pick<ToolDefinition, "name" | "annotations">,
  attestedReadTools: readonly string[],
): AccessClass => (annotatedReadOnly(tool) || attestedReadTools.includes(tool.name) ? "read" : "write");

/** A discovered tool as shown for review: with the class its annotations alone would give it. */
export const withAccess = <T extends Pick<ToolDefinition, "name" | "annotations">>(
  tool: T,
): T & { access: AccessClass } => ({ ...tool, access: toolAccess(tool, []) });
