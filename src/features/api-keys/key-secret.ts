import { hash } from "node:crypto";
import { randomToken } from "../../ids.ts";

/** `sk_` + 192 random bits. High entropy, so a plain SHA-256 is a sound lookup hash. */
export function generateApiKeySecret(): { secret: string; prefix: string; hash: string } {
  const secret = `sk_${randomToken(24)}`;
  return { secret, prefix: secret.slice(0, 11), hash: hashApiKeySecret(secret) };
}

/** Runs on every authenticated request: the one-shot `hash` costs about half of `createHash`. */
export const hashApiKeySecret = (secret: string): string => hash("sha256", secret, "hex");
