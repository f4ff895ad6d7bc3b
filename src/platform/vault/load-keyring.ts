import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { Config } from "../../config.ts";
import { devKekPath } from "./kek-source.ts";
import { generateKek, type Keyring, parseKeyring } from "./keyring.ts";

/**
 * The KEK keyring from `PATCHBAY_KEK`, or — outside production only — from `<dataDir>/kek`,
 * generated on first start with mode 0600 so the embedded default needs no setup.
 * (Production without PATCHBAY_KEK is already refused by the config loader.)
 */
export function loadKeyring(config: Config): { keyring: Keyring; generatedAt?: string } {
  if (config.kek) return { keyring: parseKeyring(config.kek) };
  const file = devKekPath(config);
  if (existsSync(file)) return { keyring: parseKeyring(readFileSync(file, "utf8")) };
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(file, `${generateKek(1)}\n`, { mode: 0o600, flag: "wx" });
  chmodSync(file, 0o600);
  return { keyring: parseKeyring(readFileSync(file, "utf8")), generatedAt: file };
}
