import { createHmac, timingSafeEqual } from "node:crypto";
import { derivedKey, type KeyPurpose } from "./derived-key.ts";
import type { Keyring } from "./keyring.ts";

/**
 * Opaque tokens the service hands out and later trusts: `<kek version>.<payload>.<mac>`, with
 * the payload as base64url JSON and an HMAC-SHA256 under a key derived for `purpose`. They are
 * signed, not encrypted: put nothing secret in them. A KEK rotation keeps old tokens valid while
 * the old version stays in the keyring.
 */
export function signToken(keyring: Keyring, purpose: KeyPurpose, payload: unknown): string {
  const version = keyring.activeVersion;
  const key = derivedKey(keyring, purpose, version);
  if (!key) throw new Error("the active KEK is missing from the keyring");
  const body = Buffer.from(JSON.stringify(payload), "utf8").toString("base64url");
  return `${version}.${body}.${mac(key, version, body)}`;
}

/** The payload of a token made by `signToken` for `purpose`, or undefined for anything else. */
export function verifyToken(keyring: Keyring, purpose: KeyPurpose, token: string): unknown {
  const match = /^([1-9][0-9]{0,8})\.([A-Za-z0-9_-]{1,4096})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return undefined;
  const [, versionText = "", body = "", given = ""] = match;
  const version = Number(versionText);
  const key = derivedKey(keyring, purpose, version);
  if (!key) return undefined;
  const expected = Buffer.from(mac(key, version, body), "base64url");
  const actual = Buffer.from(given, "base64url");
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return undefined;
  try {
    return JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

const mac = (key: Buffer, version: number, body: string) =>
  createHmac("sha256", key).update(`${version}.${body}`).digest("base64url");
