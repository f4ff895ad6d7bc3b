import type { Bytes, Int64 } from "./otlp-types.ts";

// NUL and unpaired surrogates: PostgreSQL refuses both in text and jsonb, so one such character
// would fail a whole batch. They become U+FFFD instead.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching NUL is the point
const unstorable = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** A string as we store it: at most `max` characters (a cut is marked with "…"), storable. */
export function cleanText(value: string, max: number): string {
  let text = value.length > max ? `${value.slice(0, max - 1)}…` : value;
  unstorable.lastIndex = 0;
  if (unstorable.test(text)) text = text.replace(unstorable, "\uFFFD");
  return text;
}

/** A 64-bit protobuf integer as a bigint; absent is 0. */
export function toBigInt(value: Int64 | undefined | null, unsigned: boolean): bigint {
  if (value === undefined || value === null) return 0n;
  if (typeof value === "number") return Number.isFinite(value) ? BigInt(Math.trunc(value)) : 0n;
  if (typeof value === "string") return BigInt(value);
  const bits = (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
  return unsigned || value.unsigned ? bits : BigInt.asIntN(64, bits);
}

/** A 64-bit integer for JSON: a number while exact, else its decimal string. */
export function int64ToJson(value: Int64 | undefined | null, unsigned: boolean): number | string {
  const big = toBigInt(value, unsigned);
  const small = Number(big);
  return Number.isSafeInteger(small) ? small : big.toString();
}

/** Unix nanoseconds → ISO 8601 with microseconds, the precision of a PostgreSQL timestamp. */
export function nanosToIso(nanos: bigint): string {
  const ms = nanos / 1_000_000n;
  const micros = (nanos / 1_000n) % 1_000n;
  return `${new Date(Number(ms)).toISOString().slice(0, 23)}${micros.toString().padStart(3, "0")}Z`;
}

export const dateToNanos = (date: Date): bigint => BigInt(date.getTime()) * 1_000_000n;

/**
 * A trace (16 bytes) or span (8 bytes) id as lowercase hex. Null when it has another length or
 * is all zeros, which the specification makes invalid.
 */
export function idToHex(bytes: Bytes | undefined, size: 8 | 16): string | null {
  if (!bytes || bytes.length !== size) return null;
  let zero = true;
  for (const byte of bytes) if (byte !== 0) zero = false;
  if (zero) return null;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

export const isEmpty = (bytes: Bytes | undefined): boolean => !bytes || bytes.length === 0;

/** A finite double, or null: jsonb and most consumers have no NaN or infinity. */
export const finiteOrNull = (value: unknown): number | null =>
  typeof value === "number" && Number.isFinite(value) ? value : null;

export const has = (object: object, key: string): boolean => Object.hasOwn(object, key);
