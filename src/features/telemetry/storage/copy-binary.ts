/**
 * PostgreSQL's binary COPY format: a signature and two 32-bit header words, then per row a 16-bit
 * field count and per field a 32-bit byte length (−1 for NULL) and the value in the type's binary
 * send format, then −1 as a 16-bit trailer. Not text: parsing text (timestamps, integers, the uuid,
 * de-escaping) was about a quarter of PostgreSQL's CPU for a span COPY in bench:ingest. Only the
 * types the telemetry tables use are here.
 *
 * A row is assembled as a JS string of byte values (one char per byte) and written with one
 * latin1 write: writing each field into the Buffer took ~18 runtime calls per span, which cost
 * more CPU than the binary format saved.
 */
const SIGNATURE = "PGCOPY\n\xff\r\n\0";
const HEADER = `${SIGNATURE}\0\0\0\0\0\0\0\0`; // flags (no OIDs), header extension length 0
const TRAILER = "\xff\xff";
const NULL = "\xff\xff\xff\xff";
const TWO_32 = 4_294_967_296;
/** timestamptz counts microseconds from 2000-01-01T00:00:00Z, not from the Unix epoch. */
const POSTGRES_EPOCH_MICROS = 946_684_800_000_000;
const ASCII = /^[\0-\x7f]*$/;

const char = String.fromCharCode;
const int32Chars = (n: number) => char((n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);

/** Field encoders: each returns the field's length word and bytes, as byte chars. */
export const field = {
  null: (): string => NULL,
  text(value: string): string {
    // ASCII is its own UTF-8; anything else goes through the encoder (rare in telemetry).
    const bytes = ASCII.test(value) ? value : Buffer.from(value, "utf8").toString("latin1");
    return int32Chars(bytes.length) + bytes;
  },
  nullableText: (value: string | null): string => (value === null ? NULL : field.text(value)),
  int16: (value: number): string => `\0\0\0\x02${char((value >>> 8) & 255, value & 255)}`,
  int32: (value: number): string => `\0\0\0\x04${int32Chars(value)}`,
  /** Exact for any integer a double holds exactly (|value| < 2^53); the high word carries the sign. */
  int64(value: number): string {
    const high = Math.floor(value / TWO_32);
    return `\0\0\0\x08${int32Chars(high)}${int32Chars(value - high * TWO_32)}`;
  },
  /** timestamptz from microseconds since the Unix epoch. */
  timestamp: (unixMicros: number): string => field.int64(unixMicros - POSTGRES_EPOCH_MICROS),
  /** A uuid from its text form (hyphens optional). */
  uuid(uuid: string): string {
    const bytes = Buffer.from(uuid.replaceAll("-", ""), "hex");
    // Buffer.from stops quietly at the first non-hex digit: a wrong uuid must not become another one.
    if (bytes.length !== 16 || uuid.length > 36) throw new Error(`not a uuid: ${uuid}`);
    return `\0\0\0\x10${bytes.toString("latin1")}`;
  },
  /** A signed 64-bit integer given in decimal (e.g. a resource id). */
  int64Decimal(decimal: string): string {
    const bytes = Buffer.allocUnsafe(8);
    bytes.writeBigInt64BE(BigInt(decimal));
    return `\0\0\0\x08${bytes.toString("latin1")}`;
  },
};

/** Several COPY data buffers as the parts of one COPY (one header, one trailer), no bytes copied. */
export function joinCopyData(buffers: Buffer[]): Buffer[] {
  if (buffers.length <= 1) return buffers;
  const last = buffers.length - 1;
  return buffers
    .map((b, i) => b.subarray(i === 0 ? 0 : HEADER.length, i === last ? b.length : b.length - TRAILER.length))
    .filter((part) => part.length > 0);
}

/** The start of a row of `count` fields. */
export const rowStart = (count: number): string => char((count >>> 8) & 255, count & 255);

/** Rows accumulated straight into one Buffer (transferable, like copy-text.ts's `copyBuffer`). */
export function binaryCopyWriter(expectedBytes: number) {
  let buffer = Buffer.allocUnsafeSlow(Math.max(4096, expectedBytes + HEADER.length + TRAILER.length));
  let at = buffer.write(HEADER, 0, "latin1");
  const room = (bytes: number) => {
    if (at + bytes > buffer.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(buffer.length * 2, at + bytes));
      buffer.copy(grown, 0, 0, at);
      buffer = grown;
    }
  };
  const push = (bytes: string) => {
    room(bytes.length);
    at += buffer.write(bytes, at, "latin1");
  };
  return {
    /** A row: `rowStart(n)` followed by its n fields (`field.*`). */
    push,
    /** A text field written straight as UTF-8, for long values `field.text` would copy once more. */
    pushText(value: string) {
      room(4 + value.length * 3);
      const bytes = buffer.write(value, at + 4, "utf8");
      buffer.writeInt32BE(bytes, at);
      at += 4 + bytes;
    },
    /** A bytea field of `length` bytes that `write` puts at `at` (returning where it ended). */
    pushBytes(length: number, write: (out: Buffer, at: number) => number) {
      room(4 + length);
      buffer.writeInt32BE(length, at);
      const end = write(buffer, at + 4);
      if (end !== at + 4 + length) throw new Error(`bytea field wrote ${end - at - 4} of ${length} bytes`);
      at = end;
    },
    done(): Buffer {
      push(TRAILER);
      return buffer.subarray(0, at);
    },
  };
}
