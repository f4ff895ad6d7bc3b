import type { Stream } from "./style.ts";

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
