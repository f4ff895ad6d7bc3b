import { createHash } from "node:crypto";
import { randomToken } from "../../ids.ts";

/** `sk_` + 192 random bits. High entropy, so a plain SHA-256 is a sound lookup hash. */
export function generateApiKeySecret(): { secret: string; prefix: string; hash: string } {
  const secret = `sk_${randomToken(24)}`;
  return { secret, prefix: secret.slice(0, 11), hash: hashApiKeySecret(secret) };
}

export const hashApiKeySecret = (secret: string): string => createHash("sha256").update(secret).digest("hex");
