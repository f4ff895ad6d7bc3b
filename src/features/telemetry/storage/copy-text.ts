/**
 * PostgreSQL's COPY text format: one line per row, columns separated by tabs, `\N` for NULL, and
 * backslash, newline, carriage return and tab escaped with a backslash. JSON needs no more than
 * that (JSON.stringify leaves no raw control characters), so jsonb columns are JSON text.
 */
const special = /[\\\n\r\t]/;
const specials = /[\\\n\r\t]/g;
const escapes: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

export const copyText = (value: string): string =>
  special.test(value) ? value.replace(specials, (c) => escapes[c] ?? c) : value;

export const copyNullable = (value: string | null): string => (value === null ? "\\N" : copyText(value));

export const copyJson = (value: unknown): string => copyText(JSON.stringify(value));

/**
 * COPY data accumulated row by row straight into UTF-8 bytes. Building one string for a batch
 * would leave a rope of thousands of pieces for the GC to trace, then a flat copy of a few hundred
 * kilobytes in large-object space per request; each row here is encoded and dropped at once.
 */
export function copyBuffer(expectedBytes: number) {
  // Never from Node's shared pool: the result's memory is its own, so it can be transferred to
  // another thread (conversion workers hand it to the writer).
  let buffer = Buffer.allocUnsafeSlow(Math.max(4096, expectedBytes));
  let length = 0;
  return {
    push(row: string) {
      // UTF-8 takes at most 3 bytes per UTF-16 code unit.
      const room = row.length * 3;
      if (length + room > buffer.length) {
        const grown = Buffer.allocUnsafeSlow(Math.max(buffer.length * 2, length + room));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      length += buffer.write(row, length);
    },
    done: (): Buffer => buffer.subarray(0, length),
  };
}
