/** A stream as far as styling cares: Node's process streams, or a test double. */
export type Stream = { isTTY?: boolean; write(chunk: string): unknown };

export type Style = Record<"bold" | "dim" | "red" | "green" | "yellow", (text: string) => string>;

/**
 * Colour only for a terminal, and never when NO_COLOR is set to a non-empty value
 * (https://no-color.org) or the terminal is `dumb`: piped output stays plain text.
 */
export function colorEnabled(stream: Stream, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.TERM === "dumb") return false;
  return stream.isTTY === true;
}

export function styleFor(stream: Stream, env: NodeJS.ProcessEnv = process.env): Style {
  const on = colorEnabled(stream, env);
  const sgr = (open: number, close: number) => (text: string) =>
    on ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return { bold: sgr(1, 22), dim: sgr(2, 22), red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39) };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escapes is the point.
const escapes = /\x1b\[[0-9;]*m/g;

export const stripAnsi = (text: string): string => text.replace(escapes, "");

/** Length as shown on a terminal: escapes take no columns. */
export const visibleLength = (text: string): number => stripAnsi(text).length;
