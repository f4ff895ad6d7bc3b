/**
 * Shape checks over untrusted JSON from a remote server. Iterative (an explicit stack), so a
 * hostile nesting depth cannot overflow the call stack while it is being measured.
 */

export type JsonShape = {
  /** Nesting of objects/arrays: a scalar is 0, `{}` is 1, `{"a":[]}` is 2. */
  depth: number;
  /** Some string or key holds U+0000 or a lone surrogate. */
  unstorable: boolean;
};

// Neither survives storage: PostgreSQL's jsonb refuses \u0000 and lone surrogates, and RFC
// 8785 canonicalisation refuses lone surrogates. No `u` flag: the match is on code units.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");

const NUL = String.fromCharCode(0);
// Cheap screen first: almost every text has neither NUL nor any surrogate.
const SUSPECT = new RegExp(`[${NUL}\\ud800-\\udfff]`);

export const isStorableText = (text: string): boolean =>
  !SUSPECT.test(text) || (!text.includes(NUL) && !LONE_SURROGATE.test(text));

const storableText = (text: string): string =>
  isStorableText(text) ? text : text.replaceAll(NUL, "\ufffd").replace(LONE_SURROGATES, "\ufffd");

export function jsonShape(root: unknown): JsonShape {
  let depth = 0;
  let unstorable = false;
  const values: unknown[] = [root];
  const levels: number[] = [1];
  while (values.length > 0) {
    const value = values.pop();
    const level = levels.pop() ?? 1;
    if (typeof value === "string") {
      if (!unstorable && !isStorableText(value)) unstorable = true;
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    if (level > depth) depth = level;
    if (Array.isArray(value)) {
      for (const item of value) {
        values.push(item);
        levels.push(level + 1);
      }
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      if (!unstorable && !isStorableText(key)) unstorable = true;
      values.push(item);
      levels.push(level + 1);
    }
  }
  return { depth, unstorable };
}

/** A copy with U+0000 and lone surrogates replaced by U+FFFD (keys too). Depth must be bounded. */
export function storableCopy<T>(value: T): T {
  return copy(value) as T;
}

function copy(value: unknown): unknown {
  if (typeof value === "string") return storableText(value);
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(copy);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [storableText(key), copy(item)]));
}
