/** A stream as far as styling cares: Node's process streams, or a test double. */
export type Stream = { isTTY?: boolean; write(chunk: string): unknown };

export type Style = Record<"bold" | "dim" | "red" | "green" | "yellow", (text: string) => string>;

/**
 * Colour only for a terminal, and never when NO_COLOR is set to a non-empty value
 * (https://no-color.org) or the terminal is `dumb`: piped output stays plain text.
 */
export function colorEnabled(stream: Stream, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  return env.TERM !== "dumb" && stream.isTTY === true;
}

export function styleFor(stream: Stream, env: NodeJS.ProcessEnv = process.env): Style {
  const on = colorEnabled(stream, env);
  const sgr = (open: number, close: number) => (text: string) =>
    on ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return { bold: sgr(1, 22), dim: sgr(2, 22), red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39) };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escapes is the point.
export const stripAnsi = (text: string): string => text.replace(/\x1b\[[0-9;]*m/g, "");

/** Length as shown on a terminal: escapes take no columns. */
export const visibleLength = (text: string): number => stripAnsi(text).length;

/** Columns padded to their widest cell (two spaces apart); the last column is not padded. */
export function table(headers: string[], rows: string[][]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, i) => Math.max(...all.map((row) => visibleLength(row[i] ?? ""))));
  const line = (row: string[]) =>
    row
      .map((cell, i) =>
        i === row.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - visibleLength(cell)),
      )
      .join("  ")
      .trimEnd();
  return `${all.map(line).join("\n")}\n`;
}

/** `Key   value` lines, keys padded alike; a multi-line value continues under its first line. */
export function keyValue(pairs: [string, string][]): string {
  const width = Math.max(...pairs.map(([key]) => key.length));
  const indent = " ".repeat(width + 2);
  return pairs
    .map(([key, value]) => {
      const [first = "", ...rest] = value.split("\n");
      return `${[`${key.padEnd(width)}  ${first}`, ...rest.map((l) => indent + l)].join("\n").trimEnd()}\n`;
    })
    .join("");
}

/** One line of at most `max` characters (first line only, ellipsis when cut). */
export function truncate(text: string, max: number): string {
  const firstLine = text.split("\n", 1)[0] ?? "";
  if (firstLine.length > max) return `${firstLine.slice(0, Math.max(0, max - 1)).trimEnd()}…`;
  return text.includes("\n") ? `${firstLine}…` : firstLine;
}

export const yesNo = (value: boolean): string => (value ? "yes" : "no");

export const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** A JSON object (not an array, not null): what the CLI expects of answers, profiles and token responses. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The text's JSON value; undefined when it is empty or not JSON. */
export function parseJson(text: string): unknown {
  try {
    return text === "" ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The string-valued fields among `keys` of `record`: how the CLI reads JSON it did not write. */
export const strings = (
  record: Record<string, unknown>,
  keys: string[],
): Record<string, string | undefined> =>
  Object.fromEntries(keys.flatMap((key) => (typeof record[key] === "string" ? [[key, record[key]]] : [])));
