import type { Bytes, Int64 } from "./otlp-types.ts";

// NUL and unpaired surrogates: PostgreSQL refuses both in text and jsonb (failing a whole batch);
// they become U+FFFD.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching NUL is the point
const unstorable = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
// A cheap first look (a plain character class): almost no text has NUL or surrogates at all.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching NUL is the point
const maybeUnstorable = /[\u0000\uD800-\uDFFF]/;

/** A string as we store it: at most `max` characters (a cut is marked with "…"), storable. */
export function cleanText(value: string, max: number): string {
  const text = value.length > max ? `${value.slice(0, max - 1)}…` : value;
  return maybeUnstorable.test(text) ? text.replace(unstorable, "\uFFFD") : text;
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

/**
 * A non-negative nanosecond timestamp as two exact doubles: whole microseconds (PostgreSQL's
 * precision) and the nanoseconds beyond. No BigInt or Date per span: a measurable share of ingest.
 */
export type Nanos = { micros: number; rest: number };

const ZERO: Nanos = { micros: 0, rest: 0 };

/** A protobuf fixed64 (unsigned) → Nanos; absent, zero or negative is zero (missing). */
export function toNanos(value: Int64 | undefined | null): Nanos {
  if (value === undefined || value === null) return ZERO;
  if (typeof value === "object") {
    const high = value.high >>> 0;
    // high·2^32 + low = 1000·(high·4294967) + (high·296 + low), and both terms stay below 2^53.
    const small = high * 296 + (value.low >>> 0);
    return { micros: high * 4_294_967 + Math.floor(small / 1000), rest: small % 1000 };
  }
  const big = toBigInt(value, true);
  return big <= 0n ? ZERO : { micros: Number(big / 1000n), rest: Number(big % 1000n) };
}

export const isZero = (n: Nanos): boolean => n.micros === 0 && n.rest === 0;

export const isBefore = (a: Nanos, b: Nanos): boolean =>
  a.micros < b.micros || (a.micros === b.micros && a.rest < b.rest);

/** b − a in nanoseconds (exact below 2^53 ns, i.e. 104 days). */
export const nanosBetween = (a: Nanos, b: Nanos): number => (b.micros - a.micros) * 1000 + (b.rest - a.rest);

// The last whole second formatted: a batch's spans mostly share their seconds, and toISOString
// is the dearest step.
let cachedSecond = Number.NaN;
let cachedPrefix = "";

/** ISO 8601 with microseconds, like `nanosToIso`. */
export function microsToIso(n: Nanos): string {
  const fraction = n.micros % 1_000_000;
  const second = n.micros - fraction;
  if (second !== cachedSecond) {
    cachedPrefix = new Date(second / 1000).toISOString().slice(0, 19);
    cachedSecond = second;
  }
  return `${cachedPrefix}.${String(fraction).padStart(6, "0")}Z`;
}

/** The decimal nanosecond string (as OTLP/JSON writes it). */
export const nanosToString = (n: Nanos): string =>
  n.micros === 0 ? String(n.rest) : `${n.micros}${String(n.rest).padStart(3, "0")}`;

export const dateToNanos = (date: Date): bigint => BigInt(date.getTime()) * 1_000_000n;

/** A trace (16 bytes) or span (8 bytes) id as lowercase hex; null when invalid (`isValidId`). */
export function idToHex(bytes: Bytes | undefined, size: 8 | 16): string | null {
  if (!isValidId(bytes, size)) return null;
  // protobufjs hands out Buffers on Node: no wrapper to allocate then.
  return bytes instanceof Buffer
    ? bytes.toString("hex")
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** A trace (16 bytes) or span (8 bytes) id of the right length and not all zeros. */
export function isValidId(bytes: Bytes | undefined, size: 8 | 16): bytes is Bytes {
  if (!bytes || bytes.length !== size) return false;
  for (let i = 0; i < size; i++) if (bytes[i] !== 0) return true;
  return false;
}

export const isEmpty = (bytes: Bytes | undefined): boolean => !bytes || bytes.length === 0;

/** A finite double, or null: jsonb and most consumers have no NaN or infinity. */
export const finiteOrNull = (value: unknown): number | null =>
  typeof value === "number" && Number.isFinite(value) ? value : null;

export const has = (object: object, key: string): boolean => Object.hasOwn(object, key);
