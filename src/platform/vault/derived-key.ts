import { hkdfSync } from "node:crypto";
import type { Keyring } from "./keyring.ts";

/**
 * Purposes a key is derived for. Each purpose gets its own key from each KEK version, so a
 * signature made for one purpose never verifies for another, and no purpose ever uses the KEK
 * itself (which only wraps data keys).
 */
export type KeyPurpose =
  | "x402/assumed-state"
  | "x402/replay"
  | "onboarding/approval-link"
  | "github/install-state"
  | "oauth/signing-key"
  | "oauth/cookies";

const cache = new WeakMap<Keyring, Map<string, Buffer>>();

/**
 * A 256-bit key for `purpose`, derived with HKDF-SHA256 from the KEK of `version` (default: the
 * active one). Undefined when the keyring no longer holds that version: whatever was made with
 * it can no longer be opened or verified.
 */
export function derivedKey(
  keyring: Keyring,
  purpose: KeyPurpose,
  version: number = keyring.activeVersion,
): Buffer | undefined {
  let keys = cache.get(keyring);
  if (!keys) {
    keys = new Map();
    cache.set(keyring, keys);
  }
  const id = `${version}:${purpose}`;
  const known = keys.get(id);
  if (known) return known;
  const kek = keyring.kek(version);
  if (!kek) return undefined;
  const key = Buffer.from(
    hkdfSync("sha256", kek.export(), Buffer.alloc(0), `patchbay/derived/${purpose}/v1`, 32),
  );
  keys.set(id, key);
  return key;
}
