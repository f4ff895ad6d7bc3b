import { createHash } from "node:crypto";

/** What Anthropic, OpenAI and Gemini all accept for a function/tool name. */
export const MODEL_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Model-facing names for (connection alias, tool name) pairs: `<alias>__<tool>` with every
 * other character mapped to `_`. When that is too long or already taken (two tools that differ
 * only in `.` vs `_`, or a built-in's name), it is shortened and suffixed with a hash of the
 * exact pair, so names stay unique, deterministic and ≤ 64 characters.
 */
export function assignModelToolNames(
  pairs: readonly { connectionId: string; alias: string; toolName: string }[],
  reserved: readonly string[] = [],
): string[] {
  const taken = new Set(reserved);
  return pairs.map((pair) => {
    const plain = `${pair.alias}__${pair.toolName}`.replace(/[^A-Za-z0-9_-]/g, "_");
    let name = plain;
    if (name.length > 64 || taken.has(name)) {
      const suffix = createHash("sha256")
        .update(`${pair.connectionId}\0${pair.toolName}`)
        .digest("hex")
        .slice(0, 10);
      name = `${plain.slice(0, 64 - suffix.length - 1)}_${suffix}`;
    }
    taken.add(name);
    return name;
  });
}
