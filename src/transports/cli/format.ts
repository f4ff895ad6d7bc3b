import { visibleLength } from "./style.ts";

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
  return pairs
    .map(([key, value]) => {
      const [first = "", ...rest] = value.split("\n");
      const indent = " ".repeat(width + 2);
      return [`${key.padEnd(width)}  ${first}`, ...rest.map((l) => indent + l)].join("\n").trimEnd();
    })
    .map((line) => `${line}\n`)
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
