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
