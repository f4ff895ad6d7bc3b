/** One frame of a stack trace, top (most recent call) first. */
export type StackFrame = { function: string; file: string; inApp: boolean };

// V8 (Node, browsers): "    at fn (file:line:col)", "    at file:line:col", "    at fn (native)".
const v8 = /^\s*at (?:(?<fn>.+?) \((?<loc>[^()]*)\)|(?<bare>\S+))\s*$/;
// JVM: "\tat com.shop.Checkout.pay(Checkout.java:42)" (no space before the parenthesis).
const jvm = /^\s*at (?<fn>[\w$.<>/-]+)\((?<file>[^():]+)(?::\d+)?\)\s*$/;
// Python, oldest call first: '  File "/app/views.py", line 12, in checkout'.
const python = /^\s*File "(?<file>[^"]+)", line \d+, in (?<fn>.+?)\s*$/;

/** Code that is not the application's own: dependencies, the runtime, generated glue. */
const notInApp = [
  /node_modules\//,
  /^node:/,
  /^internal\//,
  /^<anonymous>$|^native$|^\[native code\]$|^<frozen /,
  /[/\\](?:site|dist)-packages[/\\]/,
  /[/\\]lib[/\\]python\d/,
];
const jvmRuntime =
  /^(?:java\.base\/)?(?:java|javax|jdk|sun|com\.sun|kotlin|kotlinx|scala|org\.springframework|org\.apache|io\.netty)\./;

/**
 * Parses V8, JVM and Python stack traces into frames, most recent call first. Lines it does not
 * recognise (the message, "Caused by", async markers) are skipped; an unknown format yields no
 * frames, and callers then group by the (masked) message instead.
 */
export function parseStack(stack: string): StackFrame[] {
  const frames: StackFrame[] = [];
  let pythonOrder = false;
  for (const line of stack.split("\n").slice(0, 500)) {
    const j = jvm.exec(line);
    if (j?.groups) {
      const fn = j.groups.fn ?? "";
      frames.push({ function: fn, file: j.groups.file ?? "", inApp: !jvmRuntime.test(fn) });
      continue;
    }
    const v = v8.exec(line);
    if (v?.groups) {
      const location = v.groups.loc ?? v.groups.bare ?? "";
      const file = location.replace(/:\d+(?::\d+)?$/, "");
      frames.push({ function: cleanFunction(v.groups.fn ?? ""), file, inApp: isInApp(file) });
      continue;
    }
    const p = python.exec(line);
    if (p?.groups) {
      pythonOrder = true;
      const file = p.groups.file ?? "";
      frames.push({ function: p.groups.fn ?? "", file, inApp: isInApp(file) });
    }
  }
  return pythonOrder ? frames.reverse() : frames;
}

/** A location names application code when it is a path (not "native", "index 0", …) outside the runtime and dependencies. */
const isInApp = (file: string): boolean =>
  /[/\\]|\.\w+$/.test(file) && !notInApp.some((pattern) => pattern.test(file));

const cleanFunction = (fn: string): string =>
  fn.replace(/^(?:async|new) /, "").replace(/^Object\.<anonymous>$/, "<anonymous>");

/**
 * A frame as it takes part in a fingerprint: stable across deploys and builds. Line and column
 * numbers are dropped (any edit above the frame moves them), the path is cut to its last two
 * segments (deploy directories differ), and build hashes and numbers in names are masked.
 */
export function normalizeFrame(frame: StackFrame): string {
  const path = frame.file
    .replace(/^file:\/\//, "")
    .replace(/[?#].*$/, "")
    .split(/[/\\]/)
    .slice(-2)
    .join("/")
    .replace(/[.-][0-9a-f]{6,}(?=\.)/gi, "");
  const fn = frame.function.replace(/\d+/g, "<n>");
  return `${path}:${fn}`;
}
