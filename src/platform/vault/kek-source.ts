import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fchmodSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { type Config, ConfigError } from "../../config.ts";
import { addKekVersion } from "./keyring.ts";

/**
 * Where this process's keyring text comes from: `PATCHBAY_KEK`, or — outside production —
 * the development file `<dataDir>/kek` that `loadKeyring` generates.
 */
export type KekSource = { kind: "env"; raw: string } | { kind: "file"; path: string; raw: string };

/** The keyring text and its origin. Reads only: a missing development file is an error here. */
export function readKekSource(config: Config): KekSource {
  if (config.kek) return { kind: "env", raw: config.kek };
  const path = devKekPath(config);
  if (!existsSync(path)) {
    throw new ConfigError(
      "PATCHBAY_KEK",
      `is unset and ${path} does not exist (start patchbay once to create it)`,
    );
  }
  return { kind: "file", path, raw: readFileSync(path, "utf8").trim() };
}

/** The development keyring file (same place `loadKeyring` uses). */
export function devKekPath(config: Config): string {
  return join(config.dataDir, "kek");
}

/**
 * Prepends a new, higher KEK version to the development keyring file and returns the new
 * text. Written to a 0600 temp file in the same directory, flushed, then renamed over the
 * old one, so a crash leaves either the old keyring or the new one — never a torn file that
 * would lose the key every credential is wrapped under.
 */
export function addVersionToKekFile(path: string): string {
  const next = addKekVersion(readFileSync(path, "utf8"));
  const temp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    const fd = openSync(temp, "wx", 0o600);
    try {
      fchmodSync(fd, 0o600); // whatever the umask
      writeSync(fd, `${next}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
    syncDirectory(dirname(path));
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  return next;
}

// Makes the rename itself durable; best effort where directories cannot be opened (Windows).
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // the rename has happened; only its durability across a power cut is not guaranteed
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
