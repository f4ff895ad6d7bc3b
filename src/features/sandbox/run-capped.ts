import { spawn } from "node:child_process";
import type { RunLimits, RunResult } from "./sandbox.ts";

/**
 * Spawns a command in its own process group with a scrubbed environment and collects a bounded
 * tail of its output. On timeout or past the output cap the whole group is killed (SIGKILL), so
 * a test suite that forks cannot outlive its run.
 */
export function runCapped(args: {
  file: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  limits: RunLimits;
}): Promise<RunResult> {
  const { limits } = args;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(args.file, args.argv, {
      cwd: args.cwd,
      env: args.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let tail = Buffer.alloc(0);
    let bytes = 0;
    let timedOut = false;
    let outputCapped = false;
    const kill = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      tail = Buffer.concat([tail, chunk]);
      if (tail.length > limits.tailBytes) tail = tail.subarray(tail.length - limits.tailBytes);
      if (bytes > limits.maxOutputBytes && !outputCapped) {
        outputCapped = true;
        kill();
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, limits.timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      // The group may still hold children that closed their pipes: end them too.
      kill();
      resolve({
        exitCode: timedOut || outputCapped ? null : code,
        signal: signal ?? null,
        timedOut,
        outputCapped,
        outputTail: tail.toString("utf8"),
        outputBytes: bytes,
        durationMs: Math.round(performance.now() - started),
      });
    });
  });
}
