import { createSecretKey, type KeyObject, randomBytes } from "node:crypto";
import { inspect } from "node:util";
import { ConfigError } from "../../config-error.ts";

/**
 * The key-encryption keys (KEKs) from `PATCHBAY_KEK`. The highest version wraps new data
 * keys; older versions only unwrap, so a rotation can proceed row by row. Key bytes live
 * only in `KeyObject`s behind a private field: JSON, `util.inspect` and string conversion
 * show versions, never material.
 */
export type Keyring = {
  /** The version that wraps new data keys (the highest one). */
  readonly activeVersion: number;
  /** Every version held, highest first. */
  readonly versions: readonly number[];
  /** The KEK for a version, or undefined when this keyring does not hold it. */
  kek(version: number): KeyObject | undefined;
};

const VARIABLE = "PATCHBAY_KEK";
const KEY_BYTES = 32;
// 32 bytes are exactly 43 unpadded base64url characters; a trailing "=" is tolerated.
const ENTRY = /^v([1-9][0-9]{0,8}):([A-Za-z0-9_-]{43})=?$/;

type Entry = { version: number; key: Buffer; text: string };

class KeyringImpl implements Keyring {
  readonly #keys: ReadonlyMap<number, KeyObject>;
  readonly activeVersion: number;
  readonly versions: readonly number[];

  constructor(keys: Map<number, KeyObject>) {
    this.#keys = keys;
    this.versions = Object.freeze([...keys.keys()].sort((a, b) => b - a));
    this.activeVersion = this.versions[0] ?? 0;
    Object.freeze(this);
  }

  kek(version: number): KeyObject | undefined {
    return this.#keys.get(version);
  }

  toJSON(): { activeVersion: number; versions: readonly number[] } {
    return { activeVersion: this.activeVersion, versions: this.versions };
  }

  toString(): string {
    return `Keyring(active v${this.activeVersion}; versions ${this.versions.map((v) => `v${v}`).join(",")})`;
  }

  [Symbol.toPrimitive](): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/** Parses `v<N>:<base64url 32 bytes>[,…]`. Errors name the entry's position, never its text. */
export function parseKeyring(raw: string): Keyring {
  const keys = new Map<number, KeyObject>();
  for (const entry of parseEntries(raw)) {
    keys.set(entry.version, createSecretKey(entry.key));
    entry.key.fill(0);
  }
  return new KeyringImpl(keys);
}

/** A fresh single-version keyring string, e.g. for a development data dir. */
export function generateKek(version = 1): string {
  if (!Number.isInteger(version) || version < 1 || version > 999_999_999) {
    throw new RangeError("KEK version must be an integer from 1 to 999999999");
  }
  return `v${version}:${randomBytes(KEY_BYTES).toString("base64url")}`;
}

/** `raw` with a new, higher version prepended; that version becomes the active one. */
export function addKekVersion(raw: string): string {
  const entries = parseEntries(raw);
  const next = Math.max(...entries.map((e) => e.version)) + 1;
  for (const entry of entries) entry.key.fill(0);
  return [generateKek(next), ...entries.map((e) => e.text)].join(",");
}

function parseEntries(raw: string): Entry[] {
  const parts = raw.trim() === "" ? [] : raw.split(",").map((p) => p.trim());
  if (parts.length === 0) throw new ConfigError(VARIABLE, "holds no keys (expected v<N>:<base64url key>)");
  const entries: Entry[] = [];
  try {
    for (const [i, text] of parts.entries()) entries.push(parseEntry(text, i, parts.length, entries));
  } catch (error) {
    for (const entry of entries) entry.key.fill(0);
    throw error;
  }
  return entries;
}

function parseEntry(text: string, i: number, count: number, earlier: readonly Entry[]): Entry {
  const where = `entry ${i + 1} of ${count}`;
  const [, version, encoded] = ENTRY.exec(text) ?? [];
  if (version === undefined || encoded === undefined) {
    throw new ConfigError(
      VARIABLE,
      `${where} is malformed (expected v<N>:<base64url of ${KEY_BYTES} bytes>, N a positive integer)`,
    );
  }
  const n = Number(version);
  const key = Buffer.from(encoded, "base64url");
  const problem = entryProblem(n, key, encoded, earlier);
  if (problem) {
    key.fill(0);
    throw new ConfigError(VARIABLE, `${where} (v${n}) ${problem}`);
  }
  return { version: n, key, text: `v${n}:${encoded}` };
}

function entryProblem(version: number, key: Buffer, encoded: string, earlier: readonly Entry[]) {
  // Non-canonical spellings would let one key hide behind two strings.
  if (key.length !== KEY_BYTES || key.toString("base64url") !== encoded) {
    return `is not a canonical ${KEY_BYTES}-byte key`;
  }
  if (key.every((b) => b === 0)) return "is all zero bytes";
  if (earlier.some((e) => e.version === version)) return "repeats a version";
  // The same bytes under two versions means a rotation copied the old key instead of adding one.
  if (earlier.some((e) => e.key.equals(key))) return "reuses the key of another version";
  return undefined;
}
