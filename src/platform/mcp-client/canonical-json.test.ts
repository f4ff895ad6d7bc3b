import canonicalize from "canonicalize";
import { describe, expect, test } from "vitest";
import { encodeJson } from "./canonical-json.ts";

// Keys chosen to break a careless serialiser: inherited names, numeric-looking keys (which
// plain objects enumerate first), non-ASCII across the BMP boundary, escapes, the empty key.
const KEYS = [
  ...["type", "properties", "b", "a", "B", "_", "", "10", "9", "0", "__proto__"],
  ...[
    "constructor",
    "toString",
    "hasOwnProperty",
    "toJSON",
    "é",
    "€",
    "😀",
    "\ufb01",
    "a\nb",
    'q"uote',
    "back\\slash",
  ],
];
const STRINGS = [
  "",
  "plain",
  "é€😀",
  "line\nbreak\ttab",
  "\u0001\u001f\u007f",
  'q"\\',
  "\u2028\u2029",
  "</script>",
];
const NUMBERS = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 123456789012345680000, 5e-324, 1.7976931348623157e308, 1 / 3];

/** A small deterministic PRNG (mulberry32), so a failure reproduces. */
function prng(seed: number) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomJsonText(random: () => number, depth: number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const roll = random();
  if (depth <= 0 || roll < 0.3) {
    return JSON.stringify(pick<unknown>([null, true, false, pick(STRINGS), pick(NUMBERS), random() * 1e6]));
  }
  const count = Math.floor(random() * 5);
  const items = Array.from({ length: count }, () => randomJsonText(random, depth - 1));
  if (roll < 0.5) return `[${items.join(",")}]`;
  // Built as text so "__proto__" becomes an own key, as it does in what a server sends.
  return `{${items.map((item) => `${JSON.stringify(pick(KEYS))}:${item}`).join(",")}}`;
}

describe("encodeJson", () => {
  test("equals the canonicalize package (RFC 8785 reference) on 5,000 random JSON documents", () => {
    const random = prng(8785);
    for (let i = 0; i < 5_000; i++) {
      const value: unknown = JSON.parse(randomJsonText(random, 6));
      expect(encodeJson(value)?.json).toBe(canonicalize(value));
    }
  });

  test("RFC 8785 §3.2.3: members sorted by UTF-16 code units", () => {
    const value = JSON.parse(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One",' +
        '"\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}',
    );
    expect(encodeJson(value)?.json).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  test("measures depth and gives up past maxDepth without recursing further", () => {
    expect(encodeJson(JSON.parse('{"a":[{"b":{}}]}'))?.depth).toBe(4);
    expect(encodeJson("scalar")?.depth).toBe(0);
    const deep = JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`);
    expect(encodeJson(deep, 512)).toBeUndefined();
    expect(encodeJson(JSON.parse("[[[]]]"), 3)?.json).toBe("[[[]]]");
    expect(encodeJson(JSON.parse("[[[]]]"), 2)).toBeUndefined();
  });

  test("flags text holding U+0000 or a surrogate, in values and keys", () => {
    expect(encodeJson({ a: "plain" })?.suspect).toBe(false);
    expect(encodeJson({ a: "nul\u0000" })?.suspect).toBe(true);
    expect(encodeJson({ "😀": 1 })?.suspect).toBe(true);
    expect(encodeJson(["\udc00"])?.suspect).toBe(true);
  });
});
