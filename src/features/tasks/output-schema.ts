import type { ValidateFunction } from "ajv";
import { Ajv } from "ajv";
import type { SnapshotTool } from "../../platform/db/schema/tasks.ts";

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
