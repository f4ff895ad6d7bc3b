import { readdirSync, readFileSync } from "node:fs";

/** The pid of the anvil that process `parent` started (read from /proc: no pgrep needed). */
export function anvilChildOf(parent: number): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited while we looked
    }
    // "pid (comm) state ppid …": comm may hold spaces, so split after its closing parenthesis.
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (comm === "anvil" && ppid === parent) return Number(entry);
  }
  throw new Error(`no anvil child of process ${parent}: is PATCHBAY_DEV_CHAIN on?`);
}

/** True once `pid` has exited: a killed child stays a zombie until its parent reaps it, and that counts. */
export function exited(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? true;
  } catch {
    return true;
  }
}
