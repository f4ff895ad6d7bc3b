import { type ChildProcess, execFile, type StdioOptions, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";

/** A port that was free a moment ago (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error("could not find a free port"))));
    });
  });
}

export type Child = {
  name: string;
  pid: number;
  logFile: string;
  exited: () => boolean;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. Idempotent. */
  stop: (graceMs?: number) => Promise<void>;
};

const running = new Set<ChildProcess>();

/** Last resort: whatever is still running when this process exits is killed. */
process.on("exit", () => {
  for (const proc of running) proc.kill("SIGKILL");
});

/**
 * Spawns `node <args>` (this very node binary) with stdout/stderr going to `logFile`. With
 * `onMessage`, the child also gets an IPC channel and what it sends there is handed to `onMessage`.
 */
export function startNode(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  logFile: string,
  onMessage?: (message: unknown) => void,
): Child {
  const fd = openSync(logFile, "a");
  const stdio: StdioOptions = onMessage ? ["ignore", fd, fd, "ipc"] : ["ignore", fd, fd];
  const proc = spawn(process.execPath, args, { env, stdio });
  closeSync(fd);
  if (onMessage) proc.on("message", onMessage);
  running.add(proc);
  let hasExited = false;
  const exit = new Promise<void>((resolve) => {
    proc.once("exit", () => {
      hasExited = true;
      running.delete(proc);
      resolve();
    });
    proc.once("error", () => {
      hasExited = true;
      running.delete(proc);
      resolve();
    });
  });
  if (proc.pid === undefined) throw new Error(`could not start ${name}`);
  const pid = proc.pid;
  return {
    name,
    pid,
    logFile,
    exited: () => hasExited,
    async stop(graceMs = 15_000) {
      if (hasExited) return;
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
}

/** Polls `url` until it answers 200; fails early if the child dies. */
export async function waitForHttp(url: string, child: Child, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exited()) throw new Error(`${child.name} exited before it was ready:\n${tail(child.logFile)}`);
    try {
      const res = await request(url);
      await res.body.dump();
      if (res.statusCode === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      throw new Error(`${child.name} was not ready within ${timeoutMs} ms:\n${tail(child.logFile)}`);
    await sleep(100);
  }
}

/** Runs `node <args>` to completion and returns its stdout; rejects with stderr on failure. */
export function runNode(
  args: string[],
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
  timeoutMs = 120_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const options = { env, signal, timeout: timeoutMs, maxBuffer: 1 << 20 };
    execFile(process.execPath, args, options, (error, stdout, stderr) => {
      if (error) reject(new Error(`node ${args.join(" ")} failed: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

export function tail(file: string, lines = 20): string {
  if (!existsSync(file)) return "(no output)";
  return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ: 100 on every mainstream Linux build

/** CPU seconds (user + system) used so far by a process, from /proc; null where unavailable. */
export function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Resident set size of a process in bytes (VmRSS in /proc/<pid>/status); null where unavailable. */
export function processRssBytes(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match?.[1] ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** CPU seconds (user + system) used so far by every process whose command is `name`, from /proc. */
export function cpuSecondsOf(name: string): number | null {
  let total = 0;
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        if (comm !== name) continue;
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        total += (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
      } catch {
        // the process went away meanwhile
      }
    }
  } catch {
    return null;
  }
  return total;
}

/** CPU seconds used so far by all processes named `postgres` (the server's backends). */
export const postgresCpuSeconds = (): number | null => cpuSecondsOf("postgres");

/** Whole-machine CPU time from /proc/stat (busy and total over all cores, in seconds); null where unavailable. */
export function machineCpuSeconds(): { busy: number; total: number } | null {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const values = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already counted in user)
    const total = values.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = (values[3] ?? 0) + (values[4] ?? 0);
    return { busy: (total - idle) / CLOCK_TICKS_PER_SECOND, total: total / CLOCK_TICKS_PER_SECOND };
  } catch {
    return null;
  }
}
