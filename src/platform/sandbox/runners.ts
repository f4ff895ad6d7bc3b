import { execFileSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { dirname } from "node:path";
import { runCapped, SANDBOX_INFO_FD } from "./run-capped.ts";
import type { RunLimits, RunResult } from "./sandbox.ts";

/** Runs a command at a working copy's root with the given limits. */
export type Runner = {
  kind: "bwrap" | "process";
  isolation: string;
  /** `home`: a per-workspace directory for the fallback's HOME (bubblewrap uses its private /tmp). */
  run(dir: string, command: string, limits: RunLimits, home: string): Promise<RunResult>;
};

/** The Node.js that runs patchbay, offered read-only so `node --test` works inside the sandbox. */
const nodeDir = dirname(realpathSync(process.execPath));

/** PATH inside: patchbay's Node first, then the system's. Nothing else of the host's environment. */
const sandboxPath = `${nodeDir}:/usr/local/bin:/usr/bin:/bin`;

/** RLIMIT_CPU and a 1 GiB file-size cap for the command and everything it starts. */
const limited = (limits: RunLimits, command: string) => [
  "/usr/bin/prlimit",
  `--cpu=${limits.cpuSeconds}`,
  `--fsize=${1024 * 1024 * 1024}`,
  "--",
  "/bin/sh",
  "-c",
  command,
];

export const BWRAP_ISOLATION =
  "bubblewrap: new user, PID, IPC, UTS, cgroup and network namespaces (loopback only, nothing outside reachable), no capabilities, an empty environment except PATH/HOME/CI, read-only /usr and Node.js, a private /tmp, and only the working copy writable; time, CPU and output capped.";

export const PROCESS_ISOLATION =
  "process fallback: a throwaway working copy, an empty environment except PATH/HOME/CI, its own process group killed on timeout, CPU and output caps — but NO network or filesystem isolation: the test command runs as patchbay's own user, can read what that user can read and can reach the network.";

/** bubblewrap around the command: see BWRAP_ISOLATION. */
export const bwrapRunner: Runner = {
  kind: "bwrap",
  isolation: BWRAP_ISOLATION,
  run(dir, command, limits) {
    return runCapped({
      file: "bwrap",
      // The report on the info fd names the sandbox's PID namespace init, which a kill targets.
      argv: ["--info-fd", String(SANDBOX_INFO_FD), ...bwrapArgs(dir), ...limited(limits, command)],
      cwd: dir,
      env: {},
      limits,
      sandboxInfo: true,
    });
  },
};

export function bwrapArgs(dir: string): string[] {
  return [
    ["--die-with-parent", "--new-session", "--unshare-all", "--unshare-user"],
    ["--uid", "1000", "--gid", "1000", "--cap-drop", "ALL", "--clearenv"],
    ["--ro-bind", "/usr", "/usr"],
    ["--symlink", "usr/bin", "/bin"],
    ["--symlink", "usr/sbin", "/sbin"],
    ["--symlink", "usr/lib", "/lib"],
    ["--symlink", "usr/lib64", "/lib64"],
    ["--ro-bind-try", "/etc/alternatives", "/etc/alternatives"],
    ["--ro-bind", nodeDir, nodeDir],
    ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"],
    ["--bind", dir, "/workspace", "--chdir", "/workspace"],
    ["--setenv", "PATH", sandboxPath],
    ["--setenv", "HOME", "/tmp"],
    ["--setenv", "CI", "true"],
    ["--setenv", "LANG", "C.UTF-8"],
    ["--"],
  ].flat();
}

/** The fallback: see PROCESS_ISOLATION. */
export const processRunner: Runner = {
  kind: "process",
  isolation: PROCESS_ISOLATION,
  run(dir, command, limits, home) {
    const [file, ...argv] = limited(limits, command);
    return runCapped({
      file: file ?? "/usr/bin/prlimit",
      argv,
      cwd: dir,
      env: { PATH: sandboxPath, HOME: home, CI: "true", LANG: "C.UTF-8" },
      limits,
    });
  },
};

let bwrapVerdict: boolean | undefined;

/**
 * Whether bubblewrap can actually build its namespaces here: installed is not enough (a
 * container may forbid user namespaces). Probed once per process.
 */
export function bwrapWorks(): boolean {
  if (bwrapVerdict !== undefined) return bwrapVerdict;
  try {
    execFileSync("bwrap", [...bwrapArgs("/tmp"), "/bin/true"], { stdio: "ignore", timeout: 10_000 });
    bwrapVerdict = true;
  } catch {
    bwrapVerdict = false;
  }
  return bwrapVerdict;
}
