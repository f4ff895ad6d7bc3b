import { CliError, exitCodes, usageError } from "./cli-error.ts";
import type { Stream } from "./format.ts";

type Input = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?(mode: boolean): unknown };

const MAX_BYTES = 64 * 1024;

/**
 * Reads a secret from stdin, the only place secrets are taken from (never argv or the
 * environment, which other users and logs can see). Piped: all of it, minus one trailing
 * newline. A terminal: one line, not echoed.
 */
export async function readSecretFromStdin(
  what: string,
  input: Input = process.stdin,
  prompt: NodeJS.WritableStream = process.stderr,
): Promise<string> {
  const value =
    input.isTTY && input.setRawMode ? await readHiddenLine(what, input, prompt) : await readAll(input);
  if (value === "")
    throw usageError(`stdin held no ${what}`, `pipe it in: printf '%s' "$SECRET" | patchbay …`);
  return value;
}

export const stripOneNewline = (text: string): string => text.replace(/\r?\n$/, "");

async function readAll(input: Input): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    size += buffer.length;
    if (size > MAX_BYTES)
      throw usageError(`stdin is longer than ${MAX_BYTES} bytes; that is not a credential`);
    chunks.push(buffer);
  }
  return stripOneNewline(Buffer.concat(chunks).toString("utf8"));
}

function readHiddenLine(what: string, input: Input, prompt: NodeJS.WritableStream): Promise<string> {
  prompt.write(`${what} (input hidden): `);
  return new Promise((resolve, reject) => {
    let value = "";
    const finish = (error?: CliError) => {
      input.setRawMode?.(false);
      input.pause();
      input.removeListener("data", onData);
      prompt.write("\n");
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer | string) => {
      for (const char of chunk.toString()) {
        if (char === "\r" || char === "\n" || char === "\u0004") return finish();
        if (char === "\u0003")
          return finish(new CliError("interrupted", `no ${what} read: cancelled`, exitCodes.interrupted));
        if (char === "\u007f" || char === "\b") value = value.slice(0, -1);
        else value += char;
      }
    };
    input.setRawMode?.(true);
    input.resume();
    input.on("data", onData);
  });
}

/** Without --yes a deletion asks on the terminal; with no terminal it is refused before anything is sent. */
export function requireTerminalOrYes(yes: boolean | undefined): void {
  if (!yes && !process.stdin.isTTY) {
    throw usageError("refusing to delete without confirmation: stdin is not a terminal; pass --yes");
  }
}

/** Unless --yes, asks `question` on the terminal; only an explicit "y" or "yes" goes on. */
export async function confirmOrStop(
  yes: boolean | undefined,
  question: string,
  refused: string,
): Promise<void> {
  if (yes) return;
  // Loaded here: most commands never ask, and every command's start would pay for it.
  const { createInterface } = process.getBuiltinModule("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new CliError("not_confirmed", refused, exitCodes.other);
  } finally {
    rl.close();
  }
}

const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * A spinner with elapsed seconds on `stream`, drawn only when it is a terminal (a pipe or a
 * log file gets nothing). Returns the function that stops it and clears its line.
 */
export function startSpinner(stream: Stream, text: string): () => void {
  if (stream.isTTY !== true) return () => {};
  const started = Date.now();
  let frame = 0;
  const draw = () => {
    const seconds = Math.floor((Date.now() - started) / 1000);
    stream.write(`\r\x1b[K${frames[frame++ % frames.length]} ${text} ${seconds}s`);
  };
  draw();
  const timer = setInterval(draw, 80);
  timer.unref();
  return () => {
    clearInterval(timer);
    stream.write("\r\x1b[K");
  };
}
