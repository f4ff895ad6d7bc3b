/**
 * RFC 8785 (JCS) serialisation of parsed JSON, in one pass that also measures nesting and
 * flags text that may not be storable. Output is the `canonicalize` package's (the reference,
 * property-tested against this in canonical-json.test.ts): keys sorted by UTF-16 code units,
 * no whitespace, ECMAScript number and string forms. Discovery serialises every tool it lists,
 * so this avoids the reference's generality (cycle tracking, toJSON, boxed values) that JSON
 * data never needs. Recursion is bounded by `maxDepth`: a hostile nesting never reaches the
 * call stack's limit.
 */

export type Encoded = {
  json: string;
  /** Nesting of objects/arrays: a scalar is 0, `{}` is 1. */
  depth: number;
  /** Some string or key holds U+0000 or a surrogate (paired or not): check with isStorableText. */
  suspect: boolean;
};

// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON escapes exactly these characters.
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is what jsonb refuses.
const SUSPECT = /[\u0000\ud800-\udfff]/;

type State = { depth: number; suspect: boolean; maxDepth: number };

/** The value's JCS text and shape, or undefined when it nests deeper than `maxDepth`. */
export function encodeJson(value: unknown, maxDepth = Number.POSITIVE_INFINITY): Encoded | undefined {
  const state: State = { depth: 0, suspect: false, maxDepth };
  const json = encode(value, 1, state);
  return json === undefined ? undefined : { json, depth: state.depth, suspect: state.suspect };
}

/** JCS text of a JSON string (also a key). */
export function encodeString(text: string, state?: { suspect: boolean }): string {
  if (state && !state.suspect && SUSPECT.test(text)) state.suspect = true;
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

// `undefined` result: deeper than allowed. Unknown types throw, as the reference does.
function encode(value: unknown, level: number, state: State): string | undefined {
  switch (typeof value) {
    case "string":
      return encodeString(value, state);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError("JSON has no non-finite numbers");
      return String(value);
    case "boolean":
      return value ? "true" : "false";
    case "object":
      break;
    default:
      throw new TypeError(`JSON has no ${typeof value} values`);
  }
  if (value === null) return "null";
  if (level > state.maxDepth) return undefined;
  if (level > state.depth) state.depth = level;
  let out: string;
  if (Array.isArray(value)) {
    out = "[";
    for (let i = 0; i < value.length; i++) {
      const item = encode(value[i] ?? null, level + 1, state);
      if (item === undefined) return undefined;
      out += i === 0 ? item : `,${item}`;
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  // Default sort: UTF-16 code units, as RFC 8785 §3.2.3 requires.
  const keys = Object.keys(record).sort();
  out = "{";
  let first = true;
  for (const key of keys) {
    const member = record[key];
    if (member === undefined) continue;
    const item = encode(member, level + 1, state);
    if (item === undefined) return undefined;
    out += `${first ? "" : ","}${encodeString(key, state)}:${item}`;
    first = false;
  }
  return `${out}}`;
}
