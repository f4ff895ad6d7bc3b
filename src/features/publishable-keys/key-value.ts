import { createHash } from "node:crypto";
import { randomToken } from "../../ids.ts";

/** Key ids: `pbk_…`, so an id is never mistaken for the key itself (`pk_…`). */
export const newPublishableKeyId = (): string => `pbk_${randomToken()}`;

/**
 * `pk_` + 192 random bits. Publishable keys are meant to ship inside applications, so the
 * randomness is not what keeps them safe (their reach is: ingest into one environment); it makes
 * them unguessable, and a plain SHA-256 is then a sound lookup hash.
 */
export function generatePublishableKey(): { key: string; prefix: string; hash: string } {
  const key = `pk_${randomToken(24)}`;
  return { key, prefix: key.slice(0, 11), hash: hashPublishableKey(key) };
}

export const hashPublishableKey = (key: string): string => createHash("sha256").update(key).digest("hex");
