import { closeSync, mkdirSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { CliError, exitCodes } from "./cli-error.ts";

const STALE_MS = 30_000;
const GIVE_UP_MS = 15_000;

/**
 * Runs `fn` holding `<profiles>.lock`, so two patchbay processes never refresh the same login at
 * once: refresh tokens rotate, and the server treats a refresh token used twice as stolen and
 * ends the whole login. A lock left by a crashed process is taken over after 30 s.
 */
export async function withProfilesLock<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${path}.lock`;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const deadline = Date.now() + GIVE_UP_MS;
  for (;;) {
    let fd: number | undefined;
    try {
      fd = openSync(lock, "wx", 0o600);
      writeSync(fd, String(process.pid));
    } catch (error) {
      if (!(error instanceof Error && "code" in error && error.code === "EEXIST")) throw error;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    if (fd !== undefined) break;
    if (isStale(lock)) {
      rmSync(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new CliError(
        "locked",
        `another patchbay process holds ${lock}`,
        exitCodes.other,
        `retry; if no other patchbay is running, remove ${lock}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 50));
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

function isStale(lock: string): boolean {
  try {
    return Date.now() - statSync(lock).mtimeMs > STALE_MS;
  } catch {
    return false; // gone already: the next attempt takes it
  }
}
