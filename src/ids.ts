import { randomBytes, randomUUID } from "node:crypto";

export const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lowercase: unambiguous, URL-safe.

/** 120 random bits as 24 base32 characters. */
export function randomToken(bytes = 15): string {
  const buf = randomBytes(bytes);
  let out = "";
  let acc = 0;
  let bits = 0;
  for (const byte of buf) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += alphabet[(acc >> bits) & 31];
    }
  }
  if (bits > 0) out += alphabet[(acc << (5 - bits)) & 31];
  return out;
}

export type IdPrefix =
  | "org"
  | "usr"
  | "key"
  | "mcp"
  | "dsc"
  | "tsk"
  | "req"
  | "prb"
  | "rem"
  | "ses"
  | "pbk"
  | "sec"
  | "obs"
  | "wss"
  | "inv"
  | "cup"
  | "rep"
  | "oag"
  | "cap"
  | "whe"
  | "whd"
  | "msg";

export const newId = (prefix: IdPrefix): string => `${prefix}_${randomToken()}`;

export const newUuid = (): string => randomUUID();
