import { spawn } from "node:child_process";
import { readlinkSync } from "node:fs";
import type { Readable } from "node:stream";
import type { RunLimits, RunResult } from "./sandbox.ts";

/** The child's file descriptor on which a sandbox launcher (bubblewrap's `--info-fd`) reports. */
export const SANDBOX_INFO_FD = 3;

/**
 * After a kill, how long the output pipes may stay open before the run is settled anyway: a
 * process that escaped every kill must not hold the caller forever.
 */
export const SETTLE_AFTER_KILL_MS = 5000;

/** What bubblewrap reports on `--info-fd`: its sandbox's first process and PID namespace. */
type SandboxInfo = { childPid: number; pidNamespace: number };

/**
 * Spawns a command in its own process group with a scrubbed environment and collects a bounded
 * tail of its output. On timeout or past the output cap the whole tree is killed (SIGKILL), so
 * a test suite that forks cannot outlive its run.
 *
 * With `sandboxInfo`, the command is a launcher (bubblewrap) that reports its sandbox on
 * `SANDBOX_INFO_FD`. Killing the launcher's process group is not enough there: the sandbox has
 * left the group (`--new-session`), and `--die-with-parent` is racy when the launcher dies during
 * start-up (bubblewrap issues #633 and #726), which orphaned sandboxes that kept the output pipes
 * open. So the kill goes to the PID namespace's init, which takes every process of the namespace
 * with it, and is held back until the launcher has said which process that is.
 */
export function runCapped(args: {
  file: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  limits: RunLimits;
  sandboxInfo?: boolean;
}): Promise<RunResult> {
  const { limits } = args;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(args.file, args.argv, {
      cwd: args.cwd,
      env: args.env,
      detached: true,
      stdio: args.sandboxInfo ? ["ignore", "pipe", "pipe", "pipe"] : ["ignore", "pipe", "pipe"],
    });
    // Both are pipes by the stdio above; the typings cannot tell for a four-entry array.
    const stdout = child.stdout as Readable;
    const stderr = child.stderr as Readable;
    let tail = Buffer.alloc(0);
    let bytes = 0;
    let timedOut = false;
    let outputCapped = false;
    let settled = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } = { code: null, signal: null };
    let graceTimer: NodeJS.Timeout | undefined;

    // Undefined until the launcher has reported (or closed the pipe without reporting).
    let sandbox: SandboxInfo | null | undefined = args.sandboxInfo ? undefined : null;
    let killWanted = false;

    const killNow = () => {
      if (sandbox) killNamespaceInit(sandbox);
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const kill = () => {
      killWanted = true;
      graceTimer ??= setTimeout(settle, SETTLE_AFTER_KILL_MS);
      // Killing the launcher before it reported would leave its sandbox unknown and running.
      if (sandbox !== undefined) killNow();
    };
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(graceTimer);
      // The group may still hold children that closed their pipes: end them too.
      killNow();
      stdout.destroy();
      stderr.destroy();
      resolve({
        exitCode: timedOut || outputCapped ? null : exit.code,
        signal: exit.signal,
        timedOut,
        outputCapped,
        outputTail: tail.toString("utf8"),
        outputBytes: bytes,
        durationMs: Math.round(performance.now() - started),
      });
    };

    if (args.sandboxInfo) {
      readSandboxInfo(child.stdio[SANDBOX_INFO_FD] as Readable, (info) => {
        sandbox = info;
        if (killWanted) killNow();
      });
    }

    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      tail = Buffer.concat([tail, chunk]);
      if (tail.length > limits.tailBytes) tail = tail.subarray(tail.length - limits.tailBytes);
      if (bytes > limits.maxOutputBytes && !outputCapped) {
        outputCapped = true;
        kill();
      }
    };
    stdout.on("data", onData);
    stderr.on("data", onData);
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, limits.timeoutMs);
    child.on("error", (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(graceTimer);
      reject(error);
    });
    // 'exit' comes first; 'close' once the output pipes are closed too (the grace timer may not wait for it).
    child.on("exit", (code, signal) => {
      exit = { code, signal };
    });
    child.on("close", settle);
  });
}

/** Collects the launcher's JSON report; `done(null)` when the pipe closes without one. */
function readSandboxInfo(pipe: Readable, done: (info: SandboxInfo | null) => void) {
  let text = "";
  pipe.setEncoding("utf8");
  pipe.on("data", (chunk: string) => {
    // The report is a few hundred bytes; anything far larger is not bubblewrap's.
    if (text.length < 64 * 1024) text += chunk;
  });
  pipe.on("error", () => {});
  pipe.on("close", () => done(parseSandboxInfo(text)));
}

function parseSandboxInfo(text: string): SandboxInfo | null {
  try {
    const report = JSON.parse(text) as Record<string, unknown>;
    const childPid = report["child-pid"];
    const pidNamespace = report["pid-namespace"];
    if (typeof childPid !== "number" || typeof pidNamespace !== "number") return null;
    return { childPid, pidNamespace };
  } catch {
    return null;
  }
}

/**
 * SIGKILL to a PID namespace's init ends every process in the namespace. The check on
 * `/proc/<pid>/ns/pid` keeps a reused pid (the sandbox long gone) from being killed.
 */
function killNamespaceInit({ childPid, pidNamespace }: SandboxInfo) {
  try {
    if (readlinkSync(`/proc/${childPid}/ns/pid`) !== `pid:[${pidNamespace}]`) return;
    process.kill(childPid, "SIGKILL");
  } catch {
    // already gone
  }
}
